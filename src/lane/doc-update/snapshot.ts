/**
 * Gen (PM snapshot, the origin's pm_snapshot_v1): reads the STATE document and the cycle's
 * artifacts (review, branch, commit, pull request) and writes
 * `reports/pm_snapshots/<as_of_date>_<project_id>.md` as the origin's PM snapshot spec asks: the
 * pm_snapshot_v1 JSON, one `---` line, then the Markdown view (current state, goals, gaps, next
 * actions, evidence). When Tsugu opened a pull request, the snapshot is committed on top of the
 * cycle's branch and Gen asks OPEN_PR again (blocking), so it lands in the same pull request as the
 * documents it describes; resumed with the pull request, Gen completes.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { confinePath, parseWith, writeFileAtomic } from "../../core/index.js";
import { listItems, parseSections } from "../../kai/index.js";
import { PmSnapshotSchema, REVIEW_VERSION, SNAPSHOT_VERSION, type DocUpdateReview, type PmSnapshot } from "./schema.js";
import { readReviewArtifact } from "./apply.js";
import {
  PULL_REQUEST_INPUTS,
  cycleRef,
  findArtifact,
  pullRequestOutcome,
  type ArtifactRef,
  type LaneRunContext,
} from "./context.js";
import { readDoc } from "./context.js";
import { checkoutBranchFrom, defaultBranch, git } from "./git.js";

export const SNAPSHOT_DIR = "reports/pm_snapshots";

/** The snapshot's path (the origin's pm_snapshot workflow): one per project and day. */
export function snapshotPath(projectId: string, asOfDate: string): string {
  return `${SNAPSHOT_DIR}/${asOfDate}_${projectId}.md`;
}

export interface SnapshotInput {
  projectId: string;
  cycleId: string;
  now: Date;
  lane: string;
  stateFile: string;
  stateText: string | null;
  review: DocUpdateReview;
  /** Where the review is (an evidence reference). */
  reviewPath: string | null;
  branch: string | null;
  commit: string | null;
  pullRequest: string | null;
}

function sectionItems(stateText: string, match: RegExp): string[] {
  return parseSections(stateText)
    .filter((s) => match.test(s.title))
    .flatMap((s) => listItems(s.body));
}

function firstLine(body: string): string | undefined {
  return body
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "" && !l.startsWith("#"));
}

/** The cycle's pm_snapshot_v1, from the STATE document and what the lane did. */
export function snapshotFor(s: SnapshotInput): PmSnapshot {
  const accepted = s.review.update_judgements.filter((d) => d.decision === "accept");
  const rejected = s.review.update_judgements.filter((d) => d.decision === "reject");
  const applied = (s.review.target_files ?? []).map((f) => f.target.path);
  const bullets: string[] = [];
  bullets.push(
    `Lane ${s.lane}: ${accepted.length} update(s) accepted and applied${s.branch ? ` on branch \`${s.branch}\`` : ""}${s.commit ? ` (commit ${s.commit.slice(0, 12)})` : ""}, ${rejected.length} rejected.`,
  );
  bullets.push(s.pullRequest ? `Pull request #${s.pullRequest} is open for review.` : "No pull request was opened.");
  const layerB = s.stateText === null ? undefined : parseSections(s.stateText).find((x) => /layer\s*b/i.test(x.title));
  if (s.stateText === null) bullets.push(`${s.stateFile} does not exist yet.`);
  else if (layerB) bullets.push(`${s.stateFile}, ${layerB.title}: ${firstLine(layerB.body) ?? "(empty section)"}`);
  else bullets.push(`${s.stateFile} has no Layer B section.`);
  const currentItems = s.stateText === null ? [] : sectionItems(s.stateText, /current|現在/i);
  const goals = s.stateText === null ? [] : sectionItems(s.stateText, /goal|ゴール/i);
  const midGoals = s.stateText === null ? [] : sectionItems(s.stateText, /mid|中期/i);
  const stateGaps = s.stateText === null ? [] : sectionItems(s.stateText, /gap|ギャップ|δ|差分/i);
  const gaps = [
    ...stateGaps,
    ...rejected.map(
      (r) => `Update ${r.update_id ? `${r.update_id} ` : ""}to ${r.target_path} was rejected: ${r.reason}.`,
    ),
  ];
  const actions: PmSnapshot["next_actions"] = [];
  const evidenceRefs = [s.stateFile, ...(s.reviewPath ? [s.reviewPath] : [])];
  if (s.pullRequest)
    actions.push({
      id: `${s.cycleId}-1`,
      title: `Review and merge pull request #${s.pullRequest}`,
      details: `It applies ${applied.join(", ") || "the review"}.`,
      evidence_refs: evidenceRefs,
      links: [`#${s.pullRequest}`],
      impact: "high",
      effort: "low",
      status: "todo",
    });
  for (const r of rejected)
    actions.push({
      id: `${s.cycleId}-${actions.length + 1}`,
      title: `Rework the update of ${r.target_path}`,
      details: `Send a new request: ${r.reason}.`,
      evidence_refs: evidenceRefs,
      links: [],
      impact: "medium",
      effort: "medium",
      status: "todo",
    });
  if (stateGaps[0])
    actions.push({
      id: `${s.cycleId}-${actions.length + 1}`,
      title: `Close the first open gap`,
      details: stateGaps[0],
      evidence_refs: [s.stateFile],
      links: [],
      impact: "medium",
      effort: "medium",
      status: "todo",
    });
  const snapshot = {
    schema_version: SNAPSHOT_VERSION,
    project_id: s.projectId,
    generated_at: s.now.toISOString(),
    current: {
      summary: `Doc update cycle ${s.cycleId}: ${s.review.overall_assessment.summary}.`.replace(/\.\.$/, "."),
      bullets: [...bullets, ...currentItems],
    },
    goals: { short_term: goals.filter((g) => !midGoals.includes(g)), mid_term: midGoals },
    gaps,
    next_actions: actions.slice(0, 3),
    evidence: [
      {
        kind: "state",
        path: s.stateFile,
        summary:
          s.stateText === null
            ? "Does not exist yet."
            : "The STATE document after this cycle: current state, goals and gaps.",
      },
      ...(s.reviewPath
        ? [
            {
              kind: "report",
              path: s.reviewPath,
              summary: `${REVIEW_VERSION}: risk ${s.review.overall_assessment.risk_level}, ${accepted.length} accepted, ${rejected.length} rejected.`,
            },
          ]
        : []),
      ...applied
        .filter((p) => p !== s.stateFile)
        .map((path) => ({ kind: "doc", path, summary: `Replaced by this cycle's review.` })),
    ],
    notes: [
      `Written by pmagent's Gen for lane cycle ${s.cycleId}; as_of_date ${s.now.toISOString().slice(0, 10)} (UTC).`,
    ],
  };
  return parseWith(PmSnapshotSchema, snapshot, "the PM snapshot", "invalid_snapshot");
}

/** The Markdown view of a snapshot (PM snapshot spec §3). */
export function snapshotMarkdown(p: PmSnapshot): string {
  const list = (items: readonly string[], none: string) =>
    items.length > 0 ? items.map((i) => `- ${i}`) : [`- ${none}`];
  const out = [
    `# PM Snapshot: ${p.project_id} (${p.generated_at.slice(0, 10)})`,
    "",
    "## 1. Current（C: 現在地）",
    "",
    `- ${p.current.summary}`,
    ...list(p.current.bullets, ""),
  ];
  out.push(
    "",
    "## 2. Goals（G: ゴール）",
    "",
    "（短期（〜数週間））",
    "",
    ...list(p.goals.short_term, "None listed."),
    "",
    "（中期（〜数ヶ月））",
    "",
    ...list(p.goals.mid_term, "None listed."),
  );
  out.push("", "## 3. Gap（δ: ギャップ）", "", ...list(p.gaps, "None recorded."));
  out.push("", "## 4. Next 3（この1〜2週間でやるべきこと）", "");
  if (p.next_actions.length === 0) out.push("- Nothing to do.");
  p.next_actions.forEach((a, i) =>
    out.push(
      `${i + 1}. ${a.title}`,
      `   - ${a.details}`,
      `   - 関連: ${[...a.evidence_refs, ...a.links].join(", ") || "—"}`,
      "",
    ),
  );
  if (p.next_actions.length > 0) out.pop();
  out.push(
    "",
    "## 5. Evidence（このスナップショットの根拠）",
    "",
    ...p.evidence.map((e) => `- ${e.kind}: ${e.path} — ${e.summary}`),
  );
  out.push("", "## 6. Notes（補足）", "", ...list(p.notes, "None."));
  return `${out.join("\n")}\n`;
}

/** The snapshot file: the JSON, one `---` line, the Markdown view (PM snapshot spec §5). */
export function snapshotFile(p: PmSnapshot): string {
  return `${JSON.stringify(p, null, 2)}\n---\n${snapshotMarkdown(p)}`;
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
  const { review, path: reviewPath } = readReviewArtifact(ctx);
  const pr = findArtifact(entry, "pull_request");
  const branch = findArtifact(entry, "branch");
  const snap = snapshotFor({
    projectId: ctx.project.config.project_id,
    cycleId: ctx.cycleId,
    now,
    lane: `${ctx.lane.layer}/${ctx.lane.name}`,
    stateFile: ctx.lane.state_file,
    stateText: readDoc(workspace, ctx.lane.state_file),
    review,
    reviewPath,
    // The artifacts of the role before (built-in Tsugu), else the supervisor's record of the cycle.
    branch: refOf(branch) ?? cycleRef(entry, "branch"),
    commit: refOf(findArtifact(entry, "commit")) ?? cycleRef(entry, "commit"),
    pullRequest: refOf(pr) ?? cycleRef(entry, "pull_request"),
  });
  const md = snapshotFile(snap);
  const rel = snapshotPath(snap.project_id, now.toISOString().slice(0, 10));
  const file = confinePath(workspace, rel, "snapshot path");
  // Tsugu's branch and the repository (his workspace) it can be fetched from.
  const onBranch =
    pr?.ref && branch?.ref && branch.url?.startsWith("file:")
      ? { name: branch.ref, repo: fileURLToPath(branch.url) }
      : null;
  const write = () => {
    writeFileAtomic(file, md);
    sprite.artifact("pm_snapshot", {
      ref: rel,
      url: pathToFileURL(workspace).href,
      metadata: { path: rel, schema_version: SNAPSHOT_VERSION },
    });
  };
  if (!onBranch) {
    write();
    if (pr?.ref) sprite.artifact("pull_request", { ref: pr.ref });
    sprite.phaseFinished("pm_snapshot", true);
    // On the cycle's branch, the supervisor commits the snapshot onto it when this run succeeds.
    const where = ctx.onCycleBranch
      ? `committed onto the cycle's branch ${ctx.branch} with this run`
      : "no branch to put it on: it stays in this run's workspace";
    sprite.completed("success", `PM snapshot of ${ctx.cycleId}: ${rel} (${where})`);
    return;
  }
  // On the cycle's branch, Tsugu's commit is here already.
  if (!ctx.onCycleBranch) checkoutBranchFrom(workspace, onBranch.repo, onBranch.name);
  write();
  git(workspace, ["add", "--", rel]);
  git(workspace, [
    "-c",
    "user.name=Gen",
    "-c",
    "user.email=gen@pmagent.invalid",
    "commit",
    "--quiet",
    "-m",
    `reports: PM snapshot of ${ctx.cycleId}`,
  ]);
  sprite.artifact("commit", { ref: git(workspace, ["rev-parse", "HEAD"]) });
  sprite.phaseFinished("pm_snapshot", true);
  // The same head: the forge follows the open pull request's new commit instead of opening another.
  sprite.actionRequest(
    "OPEN_PR",
    {
      title: `Docs: apply ${REVIEW_VERSION} (${ctx.cycleId})`,
      body: `PM snapshot of lane cycle ${ctx.cycleId}: ${rel}`,
      base,
      head: onBranch.name,
    },
    { blocking: true },
  );
  sprite.waiting("waiting for the pull request", sprite.checkpoint(), PULL_REQUEST_INPUTS);
}

function finish(ctx: LaneRunContext, inputs: Record<string, unknown>, context: Record<string, unknown>): void {
  const pr = pullRequestOutcome(inputs, context);
  if ("failed" in pr) {
    ctx.sprite.completed("failure", `OPEN_PR for the PM snapshot failed: ${pr.failed}`);
    return;
  }
  ctx.sprite.artifact("pull_request", { ref: String(pr.number), metadata: { url: pr.url } });
  ctx.sprite.completed(
    "success",
    `PM snapshot of ${ctx.cycleId} committed on ${git(ctx.workspace, ["rev-parse", "--abbrev-ref", "HEAD"])}; pull request #${pr.number}`,
  );
}
