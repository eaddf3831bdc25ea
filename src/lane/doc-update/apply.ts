/**
 * Tsugu (apply): applies the accepted updates of the review on a new branch of the workspace,
 * commits, and asks Lattice to OPEN_PR (blocking: checkpoint, WAITING). Resumed with the pull
 * request's number, it reports the pull request and completes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { RefusedError, confinePath } from "../../core/index.js";
import { DocUpdateReviewSchema, REVIEW_VERSION } from "./schema.js";
import { guardUpdate } from "./guard.js";
import { PULL_REQUEST_INPUTS, findArtifact, pullRequestOutcome, readArtifact, readDoc, type LaneRunContext } from "./context.js";
import { defaultBranch, git } from "./git.js";

export { BRANCH_PREFIX } from "./git.js";

function apply(ctx: LaneRunContext): void {
  const { sprite, workspace } = ctx;
  sprite.phaseStarted("apply");
  const base = ctx.base ?? defaultBranch(workspace);
  // On the cycle's branch, which holds the proposal and the review at the contract's paths.
  const { data: review, path: reviewPath } = readArtifact(ctx, REVIEW_VERSION, DocUpdateReviewSchema);
  if (review.accepted.length === 0) throw new RefusedError("nothing_to_apply", `the review of ${ctx.cycleId} accepted no update: nothing to apply`);
  const { branch } = ctx;
  if (git(workspace, ["rev-parse", "--abbrev-ref", "HEAD"]) !== branch) git(workspace, ["checkout", "--quiet", "-B", branch]);
  for (const u of review.accepted) {
    // The guard again, on this workspace: the review may be older than the document.
    const g = guardUpdate(u, readDoc(workspace, u.path), ctx.lane.allowed_paths);
    if (g.reasons.length > 0 || g.after === undefined) throw new RefusedError("update_refused", `update ${u.id} (${u.path}) no longer passes the guard: ${g.reasons.join("; ")}`);
    const file = confinePath(workspace, u.path, "document path");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, g.after);
  }
  git(workspace, ["add", "--", ...review.accepted.map((u) => u.path)]);
  const message = `docs: ${review.proposal_summary} (${ctx.cycleId})\n\n${review.accepted.map((u) => `- ${u.path}: ${u.reason}`).join("\n")}\n`;
  git(workspace, ["-c", "user.name=Tsugu", "-c", "user.email=tsugu@pmagent.invalid", "commit", "--quiet", "-m", message]);
  const sha = git(workspace, ["rev-parse", "HEAD"]);
  // The url says where the branch can be fetched from (this workspace): Gen adds its snapshot to it.
  sprite.artifact("branch", { ref: branch, url: pathToFileURL(workspace).href, metadata: { base } });
  sprite.artifact("commit", { ref: sha });
  sprite.phaseFinished("apply", true);
  const body = [`Documentation update of lane cycle ${ctx.cycleId}, reviewed by Sho.`, "", ...review.decisions.map((d) => `- ${d.decision === "accept" ? "✅" : "❌"} ${d.update_id} ${d.path}${d.reasons.length ? ` — ${d.reasons.join("; ")}` : ""}`)].join("\n");
  sprite.actionRequest("OPEN_PR", { title: `docs: ${review.proposal_summary}`, body, base, head: branch }, { blocking: true });
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
  if (review?.ref) sprite.artifact(REVIEW_VERSION, { ref: review.ref, ...(review.url !== null ? { url: review.url } : {}) });
  sprite.completed("success", `applied the accepted updates of ${ctx.cycleId} on ${branch}; pull request #${pr.number}`);
}

export function runTsugu(ctx: LaneRunContext): void {
  const { resume } = ctx.sprite.readResume({ mark: true });
  if (resume) finish(ctx, resume.inputs, resume.context);
  else apply(ctx);
}
