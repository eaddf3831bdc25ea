/**
 * Gen (PM snapshot): reads the STATE document and the cycle's artifacts (review, branch, commit,
 * pull request) and writes `reports/pm_snapshots/<date>-<cycle>.md`: current state, goals, gaps and
 * next actions. When Tsugu opened a pull request, the snapshot is committed on top of the cycle's
 * branch and Gen asks OPEN_PR again (blocking), so it lands in the same pull request as the
 * documents it describes; resumed with the pull request, Gen completes.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { confinePath, writeFileAtomic } from "../../core/index.js";
import { listItems, parseSections } from "../../kai/index.js";
import { DocUpdateReviewSchema, REVIEW_VERSION, type DocUpdateReview } from "./schema.js";
import { PULL_REQUEST_INPUTS, cycleRef, findArtifact, pullRequestOutcome, readArtifact, readDoc, type ArtifactRef, type LaneRunContext } from "./context.js";
import { checkoutBranchFrom, defaultBranch, git } from "./git.js";
import { branchSlug } from "../../forge/index.js";

export const SNAPSHOT_DIR = "reports/pm_snapshots";

export interface SnapshotInput {
  cycleId: string;
  date: string;
  lane: string;
  stateFile: string;
  stateText: string | null;
  review: DocUpdateReview;
  branch: string | null;
  commit: string | null;
  pullRequest: string | null;
}

function sectionItems(stateText: string, match: RegExp): { title: string; items: string[] }[] {
  return parseSections(stateText)
    .filter((s) => match.test(s.title))
    .map((s) => ({ title: s.title, items: listItems(s.body) }));
}

function firstLine(body: string): string | undefined {
  return body.split("\n").map((l) => l.trim()).find((l) => l !== "" && !l.startsWith("#"));
}

export function snapshotMarkdown(s: SnapshotInput): string {
  const accepted = s.review.decisions.filter((d) => d.decision === "accept");
  const rejected = s.review.decisions.filter((d) => d.decision === "reject");
  const out: string[] = [`# PM snapshot — ${s.cycleId} (${s.date})`, "", "## Current", ""];
  out.push(`- Lane ${s.lane}: ${accepted.length} update(s) accepted and applied${s.branch ? ` on branch \`${s.branch}\`` : ""}${s.commit ? ` (commit ${s.commit.slice(0, 12)})` : ""}, ${rejected.length} rejected.`);
  out.push(s.pullRequest ? `- Pull request #${s.pullRequest} is open for review.` : "- No pull request was opened.");
  const sections = s.stateText === null ? [] : parseSections(s.stateText);
  const layerB = sections.find((x) => /layer\s*b/i.test(x.title));
  if (s.stateText === null) out.push(`- ${s.stateFile} does not exist yet.`);
  else if (layerB) out.push(`- ${s.stateFile}, ${layerB.title}: ${firstLine(layerB.body) ?? "(empty section)"}`);
  else out.push(`- ${s.stateFile} has no Layer B section.`);
  const goals = s.stateText === null ? [] : sectionItems(s.stateText, /goal/i).flatMap((x) => x.items);
  out.push("", "## Goals", "", ...(goals.length ? goals.map((g) => `- ${g}`) : [`- No goals listed in ${s.stateFile}.`]));
  const gaps = s.stateText === null ? [] : sectionItems(s.stateText, /gap/i).flatMap((x) => x.items);
  out.push("", "## Gaps", "");
  for (const g of gaps) out.push(`- ${g}`);
  for (const r of rejected) out.push(`- Update ${r.update_id} to ${r.path} was rejected: ${r.reasons.join("; ")}.`);
  if (gaps.length === 0 && rejected.length === 0) out.push("- None recorded.");
  out.push("", "## Next actions", "");
  if (s.pullRequest) out.push(`- Review and merge pull request #${s.pullRequest}.`);
  for (const r of rejected) out.push(`- Rework update ${r.update_id} (${r.path}) and send a new request.`);
  if (gaps[0]) out.push(`- Close the first open gap: ${gaps[0]}.`);
  return `${out.join("\n")}\n`;
}

const refOf = (a: ArtifactRef | undefined) => a?.ref ?? null;

export function runGen(ctx: LaneRunContext, now = new Date()): void {
  const { resume } = ctx.sprite.readResume({ mark: true });
  if (resume) finish(ctx, resume.inputs, resume.context);
  else snapshot(ctx, now);
}

function snapshot(ctx: LaneRunContext, now: Date): void {
  const { sprite, entry, workspace } = ctx;
  sprite.phaseStarted("pm_snapshot");
  const base = ctx.base ?? defaultBranch(workspace);
  const { data: review } = readArtifact(ctx, REVIEW_VERSION, DocUpdateReviewSchema);
  const date = now.toISOString().slice(0, 10);
  const pr = findArtifact(entry, "pull_request");
  const branch = findArtifact(entry, "branch");
  const md = snapshotMarkdown({
    cycleId: ctx.cycleId,
    date,
    lane: `${ctx.lane.layer}/${ctx.lane.name}`,
    stateFile: ctx.lane.state_file,
    stateText: readDoc(workspace, ctx.lane.state_file),
    review,
    // The artifacts of the role before (built-in Tsugu), else the supervisor's record of the cycle.
    branch: refOf(branch) ?? cycleRef(entry, "branch"),
    commit: refOf(findArtifact(entry, "commit")) ?? cycleRef(entry, "commit"),
    pullRequest: refOf(pr) ?? cycleRef(entry, "pull_request"),
  });
  const rel = `${SNAPSHOT_DIR}/${date}-${branchSlug(ctx.cycleId)}.md`;
  const file = confinePath(workspace, rel, "snapshot path");
  // Tsugu's branch and the repository (his workspace) it can be fetched from.
  const onBranch = pr?.ref && branch?.ref && branch.url?.startsWith("file:") ? { name: branch.ref, repo: fileURLToPath(branch.url) } : null;
  const write = () => {
    writeFileAtomic(file, md);
    sprite.artifact("pm_snapshot", { ref: rel, url: pathToFileURL(workspace).href, metadata: { path: rel } });
  };
  if (!onBranch) {
    write();
    if (pr?.ref) sprite.artifact("pull_request", { ref: pr.ref });
    sprite.phaseFinished("pm_snapshot", true);
    // On the cycle's branch, the supervisor commits the snapshot onto it when this run succeeds.
    const where = ctx.onCycleBranch ? `committed onto the cycle's branch ${ctx.branch} with this run` : "no branch to put it on: it stays in this run's workspace";
    sprite.completed("success", `PM snapshot of ${ctx.cycleId}: ${rel} (${where})`);
    return;
  }
  // On the cycle's branch, Tsugu's commit is here already.
  if (!ctx.onCycleBranch) checkoutBranchFrom(workspace, onBranch.repo, onBranch.name);
  write();
  git(workspace, ["add", "--", rel]);
  git(workspace, ["-c", "user.name=Gen", "-c", "user.email=gen@pmagent.invalid", "commit", "--quiet", "-m", `reports: PM snapshot of ${ctx.cycleId}`]);
  sprite.artifact("commit", { ref: git(workspace, ["rev-parse", "HEAD"]) });
  sprite.phaseFinished("pm_snapshot", true);
  // The same head: the forge follows the open pull request's new commit instead of opening another.
  sprite.actionRequest("OPEN_PR", { title: `docs: ${review.proposal_summary}`, body: `PM snapshot of lane cycle ${ctx.cycleId}: ${rel}`, base, head: onBranch.name }, { blocking: true });
  sprite.waiting("waiting for the pull request", sprite.checkpoint(), PULL_REQUEST_INPUTS);
}

function finish(ctx: LaneRunContext, inputs: Record<string, unknown>, context: Record<string, unknown>): void {
  const pr = pullRequestOutcome(inputs, context);
  if ("failed" in pr) {
    ctx.sprite.completed("failure", `OPEN_PR for the PM snapshot failed: ${pr.failed}`);
    return;
  }
  ctx.sprite.artifact("pull_request", { ref: String(pr.number), metadata: { url: pr.url } });
  ctx.sprite.completed("success", `PM snapshot of ${ctx.cycleId} committed on ${git(ctx.workspace, ["rev-parse", "--abbrev-ref", "HEAD"])}; pull request #${pr.number}`);
}
