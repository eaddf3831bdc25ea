/**
 * Tsugu (apply, the origin's doc_update_apply_v1): reads the review (the origin's
 * doc_update_review_v1, or pmagent's earlier format) and applies it only when the apply spec's
 * conditions hold — review_mode auto_accept_v1, every target file's risk "low", one entry per path,
 * each path inside the lane's allowed paths — replacing each target file whole with its
 * `final_content` on the cycle's branch (confined beneath the workspace, through no symbolic link,
 * and through the guard again: the review may be older than the document). He commits, and asks
 * Lattice to OPEN_PR (blocking: checkpoint, WAITING). Resumed with the pull request's number, he
 * reports the pull request and completes.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { RefusedError, confinePathNoLinks } from "../../core/index.js";
import { AUTO_ACCEPT_MODE, REVIEW_VERSION, type DocUpdateReview } from "./schema.js";
import { guardFinalContent } from "./guard.js";
import { readReview } from "./formats.js";
import { docReader } from "./review.js";
import {
  PULL_REQUEST_INPUTS,
  findArtifact,
  pullRequestOutcome,
  readArtifactJson,
  type LaneRunContext,
} from "./context.js";
import { defaultBranch, git } from "./git.js";

export { BRANCH_PREFIX } from "./git.js";

/** Read the review the entry references (fetched, pmagent's reference, or the origin's path). */
export function readReviewArtifact(ctx: LaneRunContext): { review: DocUpdateReview; path: string } {
  const { value, path } = readArtifactJson(ctx, REVIEW_VERSION);
  return {
    review: readReview(
      value,
      path,
      ctx.project.config.project_id,
      docReader(ctx.workspace, ctx.lane.allowed_paths),
      ctx.lane.allowed_paths,
    ),
    path,
  };
}

/** The files to write, by path: refused whole unless the apply spec's conditions (§2, §4, §5) hold for every one. */
export function applicableFiles(
  review: DocUpdateReview,
  allowedPaths: readonly string[],
  cycleId: string,
): Array<{ path: string; content: string }> {
  const files = review.target_files ?? [];
  const problems: string[] = [];
  if (review.review_mode !== AUTO_ACCEPT_MODE)
    problems.push(
      `review_mode is ${review.review_mode === undefined ? "missing" : `"${review.review_mode}"`}, not "${AUTO_ACCEPT_MODE}"`,
    );
  if (files.length === 0) problems.push("it has no target_files (nothing to apply)");
  const seen = new Set<string>();
  for (const f of files) {
    const path = f.target.path;
    if (seen.has(path)) problems.push(`${path} has more than one target_files entry`);
    seen.add(path);
    if (f.risk !== "low") problems.push(`${path} has risk "${f.risk}", not "low"`);
    if (f.final_content.trim() === "") problems.push(`${path} has an empty final_content`);
  }
  if (problems.length > 0)
    throw new RefusedError(
      "review_not_applicable",
      `the review of ${cycleId} is not applied (doc_update_apply_v1 applies only low-risk auto_accept_v1 reviews): ${problems.join("; ")}`,
    );
  return files.map((f) => ({ path: f.target.path, content: f.final_content }));
}

function apply(ctx: LaneRunContext): void {
  const { sprite, workspace } = ctx;
  sprite.phaseStarted("apply");
  const base = ctx.base ?? defaultBranch(workspace);
  // On the cycle's branch, which holds the proposal and the review at the contract's paths.
  const { review, path: reviewPath } = readReviewArtifact(ctx);
  const files = applicableFiles(review, ctx.lane.allowed_paths, ctx.cycleId);
  const { branch } = ctx;
  if (git(workspace, ["rev-parse", "--abbrev-ref", "HEAD"]) !== branch)
    git(workspace, ["checkout", "--quiet", "-B", branch]);
  // Every file checked before any is written: a refused one leaves the workspace as it was.
  const writes = files.map((f) => {
    const file = confinePathNoLinks(workspace, f.path, "document path");
    const g = guardFinalContent(
      f.path,
      f.content,
      existsSync(file) ? readFileSync(file, "utf8") : null,
      ctx.lane.allowed_paths,
    );
    if (g.reasons.length > 0 || g.after === undefined)
      throw new RefusedError(
        "update_refused",
        `the final_content of ${f.path} does not pass the guard: ${g.reasons.join("; ")}`,
      );
    return { file, path: f.path, text: g.after };
  });
  for (const w of writes) {
    mkdirSync(dirname(w.file), { recursive: true });
    writeFileSync(w.file, w.text);
  }
  // A review fetched from GitHub Actions goes onto the branch with the files it changed, as evidence.
  const fetched = ctx.fetched?.get(REVIEW_VERSION);
  git(workspace, ["add", "--", ...writes.map((w) => w.path), ...(fetched ? [fetched] : [])]);
  const message = `docs(state): apply ${REVIEW_VERSION} ${ctx.cycleId}\n\n${review.overall_assessment.summary}\n\n${writes.map((w) => `- ${w.path}`).join("\n")}\n`;
  git(workspace, [
    "-c",
    "user.name=Tsugu",
    "-c",
    "user.email=tsugu@pmagent.invalid",
    "commit",
    "--quiet",
    "-m",
    message,
  ]);
  const sha = git(workspace, ["rev-parse", "HEAD"]);
  // The url says where the branch can be fetched from (this workspace): Gen adds its snapshot to it.
  sprite.artifact("branch", { ref: branch, url: pathToFileURL(workspace).href, metadata: { base } });
  sprite.artifact("commit", { ref: sha });
  sprite.phaseFinished("apply", true);
  const body = [
    `Applies ${REVIEW_VERSION} (${reviewPath}) of lane cycle ${ctx.cycleId}: risk ${review.overall_assessment.risk_level}, ${review.review_mode}.`,
    "",
    review.overall_assessment.summary,
    "",
    "Updated files:",
    ...writes.map((w) => `- ${w.path}`),
    "",
    ...review.update_judgements.map(
      (d) =>
        `- ${d.decision === "accept" ? "✅" : "❌"} ${d.update_id ? `${d.update_id} ` : ""}${d.target_path} — ${d.reason}`,
    ),
  ].join("\n");
  sprite.actionRequest(
    "OPEN_PR",
    {
      title: `Docs: apply ${REVIEW_VERSION} to ${[...new Set(writes.map((w) => w.path.split("/")[0]))].join("/")} (${ctx.cycleId})`,
      body,
      base,
      head: branch,
    },
    { blocking: true },
  );
  sprite.info(`review: ${reviewPath}`, { kind: "review_ref" });
  sprite.waiting("waiting for the pull request", sprite.checkpoint(), PULL_REQUEST_INPUTS);
}

function finish(ctx: LaneRunContext, inputs: Record<string, unknown>, context: Record<string, unknown>): void {
  const { sprite, workspace } = ctx;
  const pr = pullRequestOutcome(inputs, context);
  if ("failed" in pr) {
    sprite.completed("failure", `OPEN_PR failed: ${pr.failed}`);
    return;
  }
  const branch = git(workspace, ["rev-parse", "--abbrev-ref", "HEAD"]);
  sprite.artifact("pull_request", { ref: String(pr.number), metadata: { url: pr.url, head: branch } });
  // Gen reads the review too: pass its reference on.
  const review = findArtifact(ctx.entry, REVIEW_VERSION);
  const fetched = ctx.fetched?.get(REVIEW_VERSION);
  if (review?.ref)
    sprite.artifact(REVIEW_VERSION, { ref: review.ref, ...(review.url !== null ? { url: review.url } : {}) });
  else if (fetched) sprite.artifact(REVIEW_VERSION, { ref: fetched, url: pathToFileURL(workspace).href });
  sprite.completed("success", `applied the review of ${ctx.cycleId} on ${branch}; pull request #${pr.number}`);
}

export function runTsugu(ctx: LaneRunContext): void {
  const { resume } = ctx.sprite.readResume({ mark: true });
  if (resume) finish(ctx, resume.inputs, resume.context);
  else apply(ctx);
}
