import { plural } from "../../core/index.js";
import { formatCost, usageText } from "../../lattice/runs/index.js";
import type { LaneStatus, WhatChanged } from "./schema.js";

/**
 * `summary_md`: a heading and 2–4 bullets (3–5 lines), built from the payload alone so that the
 * same payload always gives the same digest, with no model involved.
 */
export function laneStatusSummary(data: LaneStatus): string {
  const lane = `${data.lane.layer} / ${data.lane.name}`;
  const lines = [`## ${lane} status (as of ${data.as_of})`];
  const c = data.cycle;
  if (c.latest_cycle_id === null)
    lines.push("- No cycle yet (none on the blackboard, in git or in the STATE document)");
  else if (c.found_in !== "blackboard") {
    const pr = c.evidence.find((e) => e.type === "pr");
    const by = c.found_in === "git" ? `applied to STATE${pr ? ` by PR #${pr.id}` : ""}` : "per the STATE document";
    lines.push(
      `- ${c.latest_cycle_id} ${c.status}${c.completed_at ? ` ${c.completed_at}` : ""} (${by}; not on the blackboard)`,
    );
  } else {
    const when = c.status === "completed" ? `completed ${c.completed_at}` : `started ${c.started_at}`;
    const active = Object.values(data.steps)
      .filter((s) => s.status !== "not_started")
      .map((s) => `${s.role} ${s.status}`);
    const commit = c.commit ? `; ${c.merged ? "merged as" : `branch ${c.branch} at`} ${c.commit.slice(0, 12)}` : "";
    lines.push(
      `- ${c.latest_cycle_id} ${c.status} (${when})${commit}${active.length > 0 ? `; steps: ${active.join(", ")}` : ""}`,
    );
  }
  lines.push(
    `- State: ${data.state_view.digest}${data.state_view.known_gaps.length > 0 ? ` (${plural(data.state_view.known_gaps.length, "known gap")})` : ""}`,
  );
  const next = data.next_suggested_actions[0];
  lines.push(next ? `- Next (${next.priority}): ${next.title}` : "- No action suggested");
  const u = data.usage;
  if (u && u.total.total_tokens > 0) {
    const roles = u.by_role.map(
      (g) => `${g.key} ${g.total_tokens.toLocaleString("en-US")}${g.cost !== null ? ` (${formatCost(g.cost)})` : ""}`,
    );
    lines.push(`- Usage: ${usageText(u.total)} over ${plural(u.total.runs, "run")}; by role: ${roles.join(", ")}`);
  }
  return lines.join("\n");
}

/** `consulted`: which run sources were read; a count is only given for what was read. */
export function whatChangedSummary(
  data: WhatChanged,
  consulted: { github: boolean; runs: boolean } = { github: true, runs: true },
): string {
  const lines = [`## What changed in ${data.project_id} (${data.time_window.from} – ${data.time_window.to})`];
  const merged = data.by_category.prs.filter((p) => p.status === "merged").length;
  const runs = data.by_category.workflows.reduce((n, w) => n + w.runs, 0);
  const runText = consulted.github
    ? plural(runs, "workflow run")
    : consulted.runs
      ? `${plural(runs, "pmagent run")} (GitHub Actions not consulted)`
      : "workflow runs not consulted";
  lines.push(
    `- ${plural(merged, "PR")} merged, ${plural(data.by_category.state_docs.length, "STATE/docs file")} changed, ${runText}`,
  );
  const top = data.highlights.slice(0, 2);
  lines.push(top.length > 0 ? `- Top: ${top.map((h) => h.title).join("; ")}` : "- Nothing notable in this window");
  // Every risk counted is shown (most severe first), each cut short so the digest stays one line a point.
  const severity = { high: 0, medium: 1, low: 2 } as const;
  const risks = data.risks
    .map((r, i) => ({ r, i }))
    .sort((a, b) => severity[a.r.severity] - severity[b.r.severity] || a.i - b.i)
    .map(({ r }) => short(r.summary, 70));
  lines.push(risks.length > 0 ? `- Risks (${risks.length}): ${risks.join("; ")}` : "- No risks found");
  return lines.join("\n");
}

const short = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text);

export function errorSummary(notes: string[]): string {
  return [
    `## Kai could not answer this request`,
    `- ${notes[0] ?? "the request is invalid"}`,
    `- Fix the request and send it again (${notes.length} problem${notes.length === 1 ? "" : "s"} listed in notes)`,
  ].join("\n");
}
