import { plural } from "../../core/index.js";
import type { LaneConfig } from "../../config/light/index.js";
import { laneCycles, latestRunByEntry, type Cycle } from "./cycles.js";
import {
  pathCategory,
  type GitCommit,
  type KaiEvidence,
  type RunEvidence,
  stateView,
  isLaneApply,
} from "../evidence/index.js";
import { appliesToState, entryEvidence } from "./lane-status.js";
import type { Evidence, Highlight, Risk, WhatChanged } from "./schema.js";
import { localDate, UTC, type Zone } from "./zone.js";
import { gitCandidates, IMPACT, listText, type Candidate } from "./highlights.js";
import { changeUnits, firstSentence, unitEvidence, type ChangeUnit } from "./units.js";

export interface ChangesContext {
  project_id: string;
  lane: LaneConfig;
  /** Every configured lane, to name each run's workflow by its own lane (default: the lane alone). */
  lanes?: LaneConfig[];
  humans: string[];
  since: Date;
  until: Date;
  max_highlights: number;
  /** The zone the window's dates are read in (UTC when absent). */
  zone?: Zone;
}

type PrRow = WhatChanged["by_category"]["prs"][number];
type Impact = PrRow["impact"];

const FAILED_CONCLUSIONS = new Set(["failure", "timed_out", "cancelled", "startup_failure", "action_required"]);

function commitEvidence(c: GitCommit): Evidence {
  return { type: "commit", id: c.sha, title: c.subject, at: c.committed_at };
}

/** Impact of a change by what it touches: the lane's STATE and workflows matter most. */
function impactOf(paths: string[]): Impact {
  const cats = new Set(paths.map(pathCategory));
  if (cats.has("state_doc") || cats.has("workflow")) return "high";
  if (cats.has("docs") || cats.has("reports")) return "medium";
  return "low";
}

function categoryOf(paths: string[], laneCategory: string): string {
  const cats = new Set(paths.map(pathCategory));
  for (const c of ["workflow", "state_doc", "docs", "reports"] as const) if (cats.has(c)) return c;
  return paths.length === 0 ? laneCategory : "code";
}

const inWindow = (at: string | null, ctx: ChangesContext) =>
  at !== null && Date.parse(at) > ctx.since.getTime() && Date.parse(at) <= ctx.until.getTime();

function pullRequests(ev: KaiEvidence, ctx: ChangesContext, runs: RunEvidence[]): PrRow[] {
  const rows = new Map<number, PrRow>();
  for (const c of ev.git?.commits ?? []) {
    if (c.pr_number === null || rows.has(c.pr_number)) continue;
    const paths = c.files.map((f) => f.path);
    // GitHub writes the PR title as the merge commit's body; a squash keeps it in the subject.
    const title = c.is_merge ? c.body.split("\n")[0] || c.subject : c.subject.replace(/\s*\(#\d+\)\s*$/, "");
    rows.set(c.pr_number, { number: c.pr_number, title, status: "merged", impact: impactOf(paths), url: null, paths });
  }
  const lanePrs = new Set(runs.flatMap((r) => r.actions.flatMap((a) => (a.pr_number === null ? [] : [a.pr_number]))));
  for (const p of ev.github?.pulls ?? []) {
    // Activity in the window; updated_at alone may lie after an as_of cutoff.
    if (![p.created_at, p.merged_at, p.closed_at, p.updated_at].some((at) => inWindow(at, ctx))) continue;
    const known = rows.get(p.number);
    const status =
      p.merged_at !== null && Date.parse(p.merged_at) <= ctx.until.getTime()
        ? "merged"
        : p.state === "closed" && inWindow(p.closed_at, ctx)
          ? "closed"
          : "open";
    const paths = known?.paths ?? [];
    const impact: Impact = known?.impact ?? (lanePrs.has(p.number) ? "high" : "low");
    rows.set(p.number, { number: p.number, title: p.title, status, impact, url: p.url, paths });
  }
  for (const run of runs) {
    for (const a of run.actions) {
      if (a.pr_number === null) continue;
      const known = rows.get(a.pr_number);
      // A merge commit or GitHub knows more about it; the run may still know its URL.
      if (known) {
        if (known.url === null && a.url !== null) rows.set(a.pr_number, { ...known, url: a.url });
        continue;
      }
      rows.set(a.pr_number, {
        number: a.pr_number,
        title: a.title ?? `PR opened by ${run.role} (run ${run.run_id})`,
        status: a.pr_state ?? "open",
        impact: "high",
        url: a.url,
        paths: [],
      });
    }
  }
  const order: Record<Impact, number> = { high: 0, medium: 1, low: 2 };
  return [...rows.values()].sort((a, b) => order[a.impact] - order[b.impact] || b.number - a.number);
}

function stateDocs(commits: GitCommit[]): WhatChanged["by_category"]["state_docs"] {
  const byPath = new Map<string, { commits: GitCommit[]; changes: GitCommit["files"] }>();
  for (const c of commits) {
    if (c.is_merge) continue; // the branch's own commits carry these changes
    for (const f of c.files) {
      if (!["state_doc", "docs"].includes(pathCategory(f.path))) continue;
      const row = byPath.get(f.path) ?? { commits: [], changes: [] };
      row.commits.push(c);
      row.changes.push(f);
      byPath.set(f.path, row);
    }
  }
  return [...byPath.entries()]
    .map(([path, row]) => {
      const rename = row.changes.find((f) => f.change === "renamed");
      const change =
        row.changes[0]!.change === "deleted"
          ? "deleted"
          : row.changes.some((f) => f.change === "added")
            ? "added"
            : rename
              ? "renamed"
              : "modified";
      return {
        path,
        change,
        old_path: change === "renamed" ? rename!.old_path : null,
        commits: row.commits.length,
        last_commit: row.commits[0]!.sha,
        last_changed_at: row.commits[0]!.committed_at,
      } as const;
    })
    .sort((a, b) => Date.parse(b.last_changed_at) - Date.parse(a.last_changed_at) || a.path.localeCompare(b.path));
}

function workflows(ev: KaiEvidence, ctx: ChangesContext, runs: RunEvidence[]): WhatChanged["by_category"]["workflows"] {
  const rows: WhatChanged["by_category"]["workflows"] = [];
  const groups = new Map<string, Array<{ id: string; status: string; failed: boolean; at: string }>>();
  const add = (key: string, run: { id: string; status: string; failed: boolean; at: string }) =>
    groups.set(key, [...(groups.get(key) ?? []), run]);
  for (const r of ev.github?.workflow_runs ?? []) {
    if (inWindow(r.created_at, ctx))
      add(`github_actions\0${r.name}`, {
        id: r.id,
        status: r.conclusion ?? r.status,
        failed: FAILED_CONCLUSIONS.has(r.conclusion ?? ""),
        at: r.created_at,
      });
  }
  // The lane asked about names its roles' runs when another lane has a role of the same name.
  const laneOf = new Map(
    [...(ctx.lanes ?? []), ctx.lane].flatMap((l) => l.roles.map((r) => [r.name, `${l.layer}/${l.name}`] as const)),
  );
  for (const r of runs) {
    // A run counts in the window it started or finished in (one started before and still going is the previous window's).
    if (inWindow(r.started_at, ctx) || inWindow(r.finished_at, ctx))
      add(`pmagent\0${laneOf.get(r.role) ?? ctx.lane.layer + "/" + ctx.lane.name}:${r.role}`, {
        id: r.run_id,
        status: r.state,
        failed: r.state === "failed",
        at: r.started_at,
      });
  }
  for (const [key, list] of groups) {
    const [source, name] = key.split("\0") as ["github_actions" | "pmagent", string];
    const latest = [...list].sort((a, b) => Date.parse(b.at) - Date.parse(a.at) || b.id.localeCompare(a.id))[0]!;
    rows.push({
      name,
      source,
      runs: list.length,
      failed_runs: list.filter((r) => r.failed).length,
      latest_status: latest.status,
      latest_run_id: latest.id,
      latest_at: latest.at,
    });
  }
  return rows.sort((a, b) => b.runs - a.runs || a.name.localeCompare(b.name));
}

function cycleCandidates(cycles: Cycle[], ctx: ChangesContext, runs: RunEvidence[]): Candidate[] {
  const lane = `${ctx.lane.layer}/${ctx.lane.name}`;
  const lastRun = latestRunByEntry(runs);
  const out: Candidate[] = [];
  const completed = cycles.filter((c) => c.status === "completed" && inWindow(c.completed_at, ctx));
  if (completed.length > 1) {
    // Several cycles completed are one story: the lane kept going.
    const last = completed.at(-1)!;
    out.push({
      impact: IMPACT.cycle_completed + Math.min(completed.length, 9),
      at: last.completed_at!,
      category: ctx.lane.layer,
      title: `${lane}: ${completed.length} cycles completed (${listText(completed.map((c) => c.id))})`,
      summary: `${listText(completed.map((c) => `${c.id} (root entry ${c.root.id}: ${c.root.summary || c.root.kind})`))} went through the lane's roles to the end. The last, ${last.id}, completed at ${last.completed_at} with ${last.entries.at(-1)!.to}'s ${last.entries.at(-1)!.kind}.`,
      evidence: completed.flatMap((c) => c.entries.map(entryEvidence)),
    });
  }
  for (const c of cycles) {
    const last = c.entries.at(-1)!;
    if (c.status === "completed" && inWindow(c.completed_at, ctx)) {
      if (completed.length > 1) continue;
      out.push({
        impact: 100,
        at: c.completed_at!,
        category: ctx.lane.layer,
        title: `${lane} ${c.id} completed`,
        summary: `${c.id} (root entry ${c.root.id}: ${c.root.summary || c.root.kind}) went through ${plural(c.entries.length, "entry")} from ${c.started_at} to ${c.completed_at}. Its last step was ${last.to}'s ${last.kind}.`,
        evidence: c.entries.map(entryEvidence),
      });
    } else if (c.status === "blocked" && inWindow(last.updated_at, ctx)) {
      const failed = c.entries.filter((e) => e.status === "error" || lastRun.get(e.id)?.state === "failed");
      const waiting = c.entries.flatMap((e) => (lastRun.get(e.id)?.state === "waiting" ? [lastRun.get(e.id)!] : []));
      const at = failed[0]?.to ?? waiting[0]?.role ?? last.to;
      out.push({
        impact: 90,
        at: last.updated_at,
        category: ctx.lane.layer,
        title: `${lane} ${c.id} is blocked at ${at}`,
        summary:
          failed.length > 0
            ? `${plural(failed.length, "step")} of ${c.id} failed (${failed.map((e) => e.id).join(", ")}). The lane does not move on until someone looks at it.`
            : waiting.length > 0
              ? `${waiting.map((r) => `${r.role}'s run ${r.run_id} waits for ${Object.keys(r.waiting?.expected_inputs ?? {}).join(", ") || "input"}`).join("; ")}. The lane goes on once the input is given.`
              : `${c.id} stopped before the lane's last role. Its latest entry is ${last.id} (${last.status}).`,
        evidence: [
          ...(failed.length > 0 ? failed : [last]).map(entryEvidence),
          ...waiting.map((r): Evidence => ({ type: "run", id: r.run_id, title: `${r.role} run (waiting)` })),
        ],
      });
    } else if (c.status === "in_progress" && inWindow(c.started_at, ctx)) {
      out.push({
        impact: 55,
        at: c.started_at,
        category: ctx.lane.layer,
        title: `${lane} ${c.id} started`,
        summary: `${c.root.from} posted ${c.root.id} (${c.root.summary || c.root.kind}). Its latest step is ${last.to} (${last.status}).`,
        evidence: [entryEvidence(c.root)],
      });
    }
  }
  return out;
}

function pathGroupCandidates(
  commits: GitCommit[],
  category: "state_doc" | "docs" | "reports" | "workflow",
  impact: number,
  label: string,
): Candidate[] {
  const touching = commits.filter((c) => !c.is_merge && c.files.some((f) => pathCategory(f.path) === category));
  if (touching.length === 0) return [];
  const paths = [
    ...new Set(touching.flatMap((c) => c.files.filter((f) => pathCategory(f.path) === category).map((f) => f.path))),
  ].sort();
  const shown = paths.slice(0, 3).join(", ") + (paths.length > 3 ? `, and ${paths.length - 3} more` : "");
  return [
    {
      impact,
      at: touching[0]!.committed_at,
      category,
      title: `${label}: ${plural(paths.length, "file")} changed`,
      summary: `${plural(touching.length, "commit")} changed ${shown}. The latest was "${touching[0]!.subject}".`,
      evidence: [
        ...paths.slice(0, 5).map((p): Evidence => ({ type: "file", id: p, path: p })),
        ...touching.slice(0, 3).map(commitEvidence),
      ],
    },
  ];
}

/** Ranked by impact, then recency, then title, so that equal inputs always give equal answers. */
function rank(candidates: Candidate[], max: number): Highlight[] {
  return [...candidates]
    .sort((a, b) => b.impact - a.impact || Date.parse(b.at) - Date.parse(a.at) || a.title.localeCompare(b.title))
    .slice(0, max)
    .map(({ category, title, summary, evidence }, i) => ({ rank: i + 1, category, title, summary, evidence }));
}

/** what_changed_v1 for (since, until] from the collected evidence. */
export function buildWhatChanged(ctx: ChangesContext, ev: KaiEvidence): WhatChanged {
  const runs = ev.runs ?? [];
  const laneRoles = new Set(ctx.lane.roles.map((r) => r.name));
  const laneRuns = runs.filter((r) => laneRoles.has(r.role));
  const commits = ev.git?.commits ?? [];
  const cycles = laneCycles(ev.board ?? [], ctx.lane, ctx.humans, laneRuns, ev.cycle_mentions ?? []);
  const prs = pullRequests(ev, ctx, laneRuns);
  // Every run of the project in the window counts; the lane's own drive its cycles, risks and questions.
  const wf = workflows(ev, ctx, runs);
  const candidates: Candidate[] = [...cycleCandidates(cycles, ctx, laneRuns)];
  const units = changeUnits(commits);
  const boardCompleted = new Set(
    cycles.filter((c) => c.status === "completed" && inWindow(c.completed_at, ctx)).map((c) => c.id),
  );
  const git = gitCandidates(units, {
    lane: ctx.lane,
    state: ev.state_doc,
    stateBefore: ev.state_doc_before ?? null,
    boardCompleted,
  });
  candidates.push(...git.candidates);
  const grouped = new Set([...git.used].flatMap((u) => (u.pr === null ? [] : [u.pr])));
  const openedBy = new Map(
    laneRuns.flatMap((r) => r.actions.flatMap((a) => (a.pr_number === null ? [] : [[a.pr_number, r] as const]))),
  );
  // A merged PR that only touched docs or reports is told by the Docs or Reports line below, not again on its own.
  for (const u of units) {
    const cats = u.commit.files.map((f) => pathCategory(f.path));
    if (u.pr !== null && !openedBy.has(u.pr) && cats.length > 0 && cats.every((c) => c === "docs" || c === "reports"))
      grouped.add(u.pr);
  }
  for (const pr of prs.filter((p) => !grouped.has(p.number))) {
    const unit = units.find((u) => u.pr === pr.number);
    const run = openedBy.get(pr.number);
    const why = unit ? firstSentence(unit.body) : "";
    const where =
      pr.paths.length > 0
        ? ` It touched ${plural(pr.paths.length, "file")} under ${[...new Set(pr.paths.map((p) => p.split("/").slice(0, -1).join("/") || "/"))].slice(0, 3).join(", ")}.`
        : "";
    candidates.push({
      // A PR the lane's own run opened is the lane's work; one known only from GitHub (its files
      // unknown, so in no group) comes before the merged changes no group took, which are background.
      impact: run ? 65 : (unit ? IMPACT.single_pr : 36) + (pr.status === "merged" ? 4 : 0),
      at: unit?.at ?? ctx.until.toISOString(),
      category: categoryOf(pr.paths, ctx.lane.layer),
      title: `PR #${pr.number} ${pr.status}: ${pr.title}`,
      summary: `${why || `Pull request #${pr.number} is ${pr.status}.`}${where}`,
      evidence: [
        { type: "pr", id: String(pr.number), title: pr.title, ...(pr.url ? { url: pr.url } : {}) },
        ...(unit ? [commitEvidence(unit.commit)] : []),
        ...(run
          ? [
              {
                type: "run",
                id: run.run_id,
                title: `${run.role} run (${run.state})`,
                at: run.finished_at ?? run.started_at,
              } as const,
            ]
          : []),
      ],
    });
  }
  for (const w of wf.filter((w) => w.failed_runs > 0)) {
    candidates.push({
      impact: 75,
      at: w.latest_at,
      category: "workflow",
      title: `${w.name}: ${w.failed_runs} of ${plural(w.runs, "run")} failed`,
      summary: `The latest run ${w.latest_run_id} ended ${w.latest_status}.`,
      evidence: [
        {
          type: w.source === "github_actions" ? "workflow_run" : "run",
          id: w.latest_run_id,
          title: w.name,
          at: w.latest_at,
        },
      ],
    });
  }
  // Docs and reports beyond the groups above: one line each, below any grouped change.
  const rest = commits.filter((c) => !git.used.has(units.find((u) => u.commit === c)!));
  candidates.push(
    ...pathGroupCandidates(rest, "docs", 25, "Docs"),
    ...pathGroupCandidates(rest, "reports", 15, "Reports"),
  );
  const issues = (ev.github?.issues ?? []).filter((i) => inWindow(i.created_at, ctx) || inWindow(i.closed_at, ctx));
  if (issues.length > 0) {
    const opened = issues.filter((i) => inWindow(i.created_at, ctx)).length;
    const closed = issues.filter((i) => inWindow(i.closed_at, ctx)).length;
    candidates.push({
      impact: 35,
      at: issues
        .map((i) => i.updated_at)
        .sort()
        .at(-1)!,
      category: "issue",
      title: `Issues: ${opened} opened, ${closed} closed`,
      summary: `Among them ${issues
        .slice(0, 3)
        .map((i) => `#${i.number} ${i.title}`)
        .join("; ")}.`,
      evidence: issues
        .slice(0, 5)
        .map((i): Evidence => ({ type: "issue", id: String(i.number), title: i.title, url: i.url })),
    });
  }
  const fromWindow = windowRisks(ctx, ev, units, laneRuns);
  return {
    kind: "what_changed_v1",
    project_id: ctx.project_id,
    time_window: { from: localDate(ctx.since, ctx.zone ?? UTC), to: localDate(ctx.until, ctx.zone ?? UTC) },
    highlights: rank(candidates, ctx.max_highlights),
    by_category: { workflows: wf, prs, state_docs: stateDocs(commits) },
    risks: [...risks(ctx, ev, { cycles, runs: laneRuns, wf, commits }), ...fromWindow.risks],
    open_questions: [...openQuestions(ctx, cycles, laneRuns, prs), ...fromWindow.questions],
  };
}

/** What the window showed, as `whatChanged` read it: the risks are drawn from these. */
interface WindowSeen {
  cycles: Cycle[];
  runs: RunEvidence[];
  wf: WhatChanged["by_category"]["workflows"];
  commits: GitCommit[];
}

function risks(ctx: ChangesContext, ev: KaiEvidence, seen: WindowSeen): Risk[] {
  const { cycles, runs, wf, commits } = seen;
  const out: Risk[] = [];
  const latest = cycles.at(-1);
  if (latest?.status === "blocked") {
    const failed = latest.entries.filter((e) => e.status === "error");
    out.push({
      id: `cycle-blocked-${latest.id}`,
      severity: "high",
      summary: `${latest.id} of ${ctx.lane.layer}/${ctx.lane.name} is blocked${failed.length > 0 ? `: ${failed.map((e) => `${e.to}'s ${e.id}`).join(", ")} ended in error` : ""}`,
      evidence: (failed.length > 0 ? failed : latest.entries.slice(-1)).map(entryEvidence),
    });
  }
  for (const w of wf.filter((w) => w.source === "github_actions" && FAILED_CONCLUSIONS.has(w.latest_status))) {
    out.push({
      id: `workflow-failing-${w.name}`,
      severity: "high",
      summary: `workflow ${w.name}'s latest run ${w.latest_run_id} ended ${w.latest_status}`,
      evidence: [{ type: "workflow_run", id: w.latest_run_id, title: w.name, at: w.latest_at }],
    });
  }
  const doc = ev.state_doc;
  const lastCompleted = [...cycles].reverse().find((c) => c.status === "completed");
  if (
    doc &&
    appliesToState(ctx.lane) &&
    lastCompleted?.completed_at &&
    (doc.updated_at === null || Date.parse(doc.updated_at) < Date.parse(lastCompleted.completed_at))
  ) {
    out.push({
      id: "state-doc-not-updated",
      severity: "medium",
      summary: `${doc.path} does not reflect ${lastCompleted.id} yet: ${doc.updated_at === null ? "it does not exist" : `last changed ${doc.updated_at}`}, cycle completed ${lastCompleted.completed_at}`,
      evidence: [{ type: "file", id: doc.path, path: doc.path }, entryEvidence(lastCompleted.root)],
    });
  }
  const waiting = runs.filter((r) => r.state === "waiting");
  if (waiting.length > 0) {
    out.push({
      id: "runs-waiting",
      severity: "medium",
      summary: `${plural(waiting.length, "run")} waiting for input: ${waiting.map((r) => `${r.role} ${r.run_id}`).join(", ")}`,
      evidence: waiting.map((r): Evidence => ({ type: "run", id: r.run_id, title: `${r.role} run` })),
    });
  }
  const proposals = runs.flatMap((r) =>
    r.environment_proposals.filter((p) => p.status === "pending").map((p) => ({ run: r, p })),
  );
  if (proposals.length > 0) {
    out.push({
      id: "environment-proposals-pending",
      severity: "medium",
      summary: `${plural(proposals.length, "environment proposal")} pending a decision: ${proposals.map(({ run, p }) => `${run.role}: ${p.summary}`).join("; ")}`,
      evidence: proposals.map(({ p }): Evidence => ({ type: "environment_proposal", id: p.id, title: p.summary })),
    });
  }
  if (ev.git && commits.length === 0) {
    out.push({
      id: "no-commits",
      severity: "low",
      summary: `no commits between ${ctx.since.toISOString()} and ${ctx.until.toISOString()}`,
      evidence: [],
    });
  }
  return out;
}

function openQuestions(ctx: ChangesContext, cycles: Cycle[], runs: RunEvidence[], prs: PrRow[]): string[] {
  const out: string[] = [];
  for (const r of runs.filter((r) => r.state === "waiting")) {
    const inputs = Object.keys(r.waiting?.expected_inputs ?? {});
    out.push(
      `Who provides ${inputs.length > 0 ? inputs.join(", ") : "the input"} for ${r.role}'s run ${r.run_id} (waiting since ${r.waiting?.since ?? r.started_at})?`,
    );
  }
  for (const r of runs) {
    for (const p of r.environment_proposals.filter((p) => p.status === "pending"))
      out.push(`Should ${r.role}'s environment proposal ${p.id} (${p.summary}) be accepted?`);
  }
  for (const pr of prs.filter((p) => p.status === "open"))
    out.push(`When will PR #${pr.number} (${pr.title}) be reviewed and merged?`);
  const latest = cycles.at(-1);
  if (latest?.status === "in_progress") {
    const last = latest.entries.at(-1)!;
    if (!inWindow(last.updated_at, ctx))
      out.push(
        `Is ${latest.id} still moving? Its latest entry ${last.id} last changed at ${last.updated_at}, before this window.`,
      );
  }
  return out;
}

const short = (text: string, max = 90) => (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text);

/**
 * Risks and questions from what this window did (not what the STATE document has always said):
 * gaps added or closed, the STATE document edited by several changes, entries left waiting on a
 * human, runs that failed, a cycle applied whose later steps have not run.
 */
function windowRisks(
  ctx: ChangesContext,
  ev: KaiEvidence,
  units: ChangeUnit[],
  runs: RunEvidence[],
): { risks: Risk[]; questions: string[] } {
  const risks: Risk[] = [];
  const questions: string[] = [];
  const doc = ev.state_doc;
  if (doc?.exists) {
    const file: Evidence = { type: "file", id: doc.path, path: doc.path };
    const now = stateView(doc, ctx.lane).known_gaps;
    const before = ev.state_doc_before?.exists ? stateView(ev.state_doc_before, ctx.lane).known_gaps : [];
    const added = now.filter((g) => !before.includes(g));
    const closed = before.filter((g) => !now.includes(g));
    if (added.length > 0) {
      risks.push({
        id: "gaps-added",
        severity: "medium",
        summary: `${plural(added.length, "gap")} added to ${doc.path} this window: ${added
          .slice(0, 3)
          .map((g) => short(g))
          .join("; ")}${added.length > 3 ? "; …" : ""}`,
        evidence: [file],
      });
      for (const g of added.slice(0, 3)) questions.push(`Who closes the new gap "${short(g)}", and by when?`);
    }
    if (closed.length > 0)
      questions.push(
        `${plural(closed.length, "gap")} left ${doc.path} this window (${closed
          .slice(0, 2)
          .map((g) => `"${short(g, 60)}"`)
          .join(", ")}${closed.length > 2 ? ", …" : ""}): closed, or only moved?`,
      );
    const editors = units.filter((u) => u.commit.files.some((f) => f.path === doc.path));
    if (editors.length > 1) {
      const refs = editors.map((u) => (u.pr !== null ? `#${u.pr}` : u.commit.sha.slice(0, 7)));
      risks.push({
        id: "state-doc-multiple-editors",
        severity: "low",
        summary: `${doc.path} was changed by ${editors.length} changes this window (${refs.slice(0, 5).join(", ")}${refs.length > 5 ? ", …" : ""}): check they agree`,
        evidence: [file, ...editors.slice(0, 5).map(unitEvidence)],
      });
    }
    // A cycle applied this window: the roles after the apply (the PM snapshot) have nothing in git.
    // Each is named with the kind the role before it sends it (Hana picks more kinds than that one).
    const applier = ctx.lane.roles.findIndex((r) => r.allowed_kinds.some((k) => /apply/i.test(k)));
    const after = applier >= 0 ? ctx.lane.roles.slice(applier + 1) : [];
    const applied = editors.find((u) => isLaneApply(`${u.title}\n${u.body}`, ctx.lane));
    if (
      applied &&
      after.length > 0 &&
      !(ev.board ?? []).some((e) => after.some((r) => r.name === e.to) && inWindow(e.updated_at, ctx))
    ) {
      questions.push(
        `${applied.pr !== null ? `PR #${applied.pr}` : "A commit"} applied the lane's proposal to ${doc.path}: have ${after.map((r) => r.name).join(" and ")} (${after.map((r, i) => ctx.lane.roles[applier + i]!.next?.kind ?? r.allowed_kinds[0]).join(", ")}) run since?`,
      );
    }
  }
  const humans = new Set(ctx.humans);
  const waiting = (ev.board ?? []).filter(
    (e) => humans.has(e.to) && e.status === "open" && Date.parse(e.created_at) <= ctx.until.getTime(),
  );
  if (waiting.length > 0) {
    risks.push({
      id: "entries-waiting-on-human",
      severity: "medium",
      summary: `${plural(waiting.length, "entry")} waiting on a human: ${waiting
        .slice(0, 3)
        .map((e) => `${e.id} (${e.kind})`)
        .join(", ")}`,
      evidence: waiting.slice(0, 5).map(entryEvidence),
    });
  }
  const failed = runs.filter((r) => r.state === "failed" && inWindow(r.finished_at ?? r.started_at, ctx));
  if (failed.length > 0) {
    risks.push({
      id: "runs-failed",
      severity: "high",
      summary: `${plural(failed.length, "run")} of the lane failed this window: ${failed
        .slice(0, 3)
        .map((r) => `${r.role} ${r.run_id}`)
        .join(", ")}`,
      evidence: failed
        .slice(0, 5)
        .map((r): Evidence => ({ type: "run", id: r.run_id, title: `${r.role} run (failed)` })),
    });
  }
  return { risks, questions };
}
