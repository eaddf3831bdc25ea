/**
 * Whole lane cycles with the real coding-agent CLIs in the roles, each against a scripted local
 * server answering in its API's streaming format (OpenAI Responses for Codex, Anthropic Messages
 * for Claude Code, Gemini streamGenerateContent for Gemini CLI), driven as a user drives them:
 * `pmagent init`, `bb post`, `worker --once`, `runs list`, `prs`, `kai status` (helpers/team-lanes.ts).
 *
 * SQLite only: what is under test is work passing between agents on a cycle's branch (git, the
 * forge, the CLIs), which does not depend on the store; both stores are covered by the supervisor's
 * own cycle tests (test/lattice/supervisor/cycle.test.ts).
 */
import { describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import {
  type Repo,
  APPENDED,
  CODE_BRANCH,
  DOC_BRANCH,
  PROPOSAL_FILE,
  REVIEW,
  REVIEW_FILE,
  STATE_DOC,
  codeLaneCycle,
  commitsOf,
  docLaneCycle,
  git,
  pmagentJson,
  runsOf,
  startAgentServers,
} from "../helpers/team-lanes.js";

interface EntryRow {
  id: string;
  to: string;
  kind: string;
  status: string;
  payload: { summary?: string; details?: Record<string, unknown>; refs?: Record<string, unknown> };
}
interface PullRow {
  number: number;
  head: string;
  base: string;
  state: string;
  head_sha: string;
}
interface KaiStatus {
  payload: { data: { cycle: Record<string, unknown>; usage: { by_cycle: Array<{ key: string; runs: number }> } } };
}

describe("the code lane with Codex, Claude Code and Gemini CLI", () => {
  it(
    "Developer (Codex) writes, Reviewer (Claude) requests changes, Developer (Gemini) fixes with the review in its task, Reviewer approves: one merged pull request with every role's commit and no .lattice/",
    { timeout: 600_000 },
    async () => {
      const servers = await startAgentServers();
      let repo: Repo | undefined;
      try {
        const cycle = await codeLaneCycle(servers, {
          developer: "codex",
          reviewer: "claude",
          fixer: "gemini",
          approver: "claude",
        });
        repo = cycle.repo;
        const start = cycle.start;

        const runs = await runsOf(repo);
        expect(runs.map((r) => [r.role, r.entry_id, r.state, r.reason, r.command.slice(0, 3).join(" ")])).toEqual([
          ["Developer", "greet", "succeeded", null, "pmagent agent-run codex"],
          ["Reviewer", "greet-review", "succeeded", null, "pmagent agent-run claude"],
          ["Developer", "greet-review-fix", "succeeded", null, "pmagent agent-run gemini"],
          ["Reviewer", "greet-review-fix-review", "succeeded", null, "pmagent agent-run claude"],
        ]);

        // The entries chain through the review and back; the cycle ends with Human.
        const entries = (await pmagentJson<{ items: EntryRow[] }>(repo, ["bb", "list", "--order", "oldest"])).items;
        expect(entries.map((e) => [e.id, e.to, e.kind, e.status])).toEqual([
          ["greet", "Developer", "code_request", "done"],
          ["greet-review", "Reviewer", "code_review_request", "done"],
          ["greet-review-fix", "Developer", "code_fix_request", "done"],
          ["greet-review-fix-review", "Reviewer", "code_review_request", "done"],
          ["greet-review-fix-review-done", "Human", "code_cycle_done", "open"],
        ]);
        expect(entries[2]!.payload.details).toMatchObject({
          outcome: "changes_requested",
          from_role: "Reviewer",
          review: REVIEW,
        });
        // Each entry refers to the commit the role before handed on.
        expect(entries.slice(1, 4).map((e) => e.payload.refs?.commit)).toEqual(
          runs.slice(0, 3).map((r) => r.cycle?.commit),
        );

        // The Reviewer read the Developer's file (its tool result went back to the model)…
        expect(JSON.stringify(servers.claude.requests[1]!.body)).toContain('return \\"Hello \\" + name');
        // …and the review reached the Developer's second task, the agent now Gemini.
        const fixTask = JSON.stringify(servers.gemini.requests[0]!.body);
        expect(fixTask).toContain(REVIEW);
        expect(fixTask).toContain("greet-review-fix");
        // The Reviewer is told the outcomes it routes on.
        expect(JSON.stringify(servers.claude.requests[0]!.body)).toContain("--outcome <outcome>");

        // One commit per role and round on the cycle's branch, each holding that role's work.
        expect(commitsOf(repo, `${start}..${CODE_BRANCH}`)).toEqual([
          { author: "Developer", subject: "Developer: greet", files: ["src/greet.py"] },
          { author: "Reviewer", subject: "Reviewer: greet-review", files: ["REVIEWS.md"] },
          { author: "Developer", subject: "Developer: greet-review-fix", files: ["src/greet.py"] },
          { author: "Reviewer", subject: "Reviewer: greet-review-fix-review", files: ["REVIEWS.md"] },
        ]);
        const head = git(repo.bare, "rev-parse", CODE_BRANCH);
        expect(runs[3]!.cycle).toMatchObject({ commit: head, pull_request: { number: 1 }, merged: head });

        // One pull request, merged by the Reviewer's approval: main is the branch's head.
        const prs = (await pmagentJson<{ items: PullRow[] }>(repo, ["prs"])).items;
        expect(prs.map((p) => [p.number, p.head, p.base, p.state, p.head_sha])).toEqual([
          [1, CODE_BRANCH, "main", "merged", head],
        ]);
        expect(git(repo.bare, "rev-parse", "main")).toBe(head);
        expect(git(repo.bare, "diff", "--name-only", start, "main").split("\n")).toEqual([
          "REVIEWS.md",
          "src/greet.py",
        ]);
        expect(git(repo.bare, "show", "main:src/greet.py")).toBe('def greet(name):\n    return "Hello " + name + "!"');
        expect(git(repo.bare, "show", "main:REVIEWS.md")).toBe(
          `## greet-review\nchanges requested: ${REVIEW}\n## greet-review-fix-review\napproved`,
        );

        // Kai's lane status reads the finished cycle, its four runs and their usage.
        const status = await pmagentJson<KaiStatus>(repo, ["kai", "status", "--lane", "code/code"]);
        expect(status.payload.data.cycle).toMatchObject({ root_entry_id: "greet", status: "completed" });
        expect(status.payload.data.usage.by_cycle.map((c) => [c.key, c.runs])).toEqual([["greet", 4]]);
      } finally {
        await servers.close();
        if (repo) rmSync(dirname(repo.dir), { recursive: true, force: true });
      }
    },
  );
});

describe("the doc_update lane with Codex as Aya, Claude Code as Sho and Gemini CLI as Tsugu", () => {
  it(
    "Aya's proposal, Sho's review and Tsugu's STATE change are commits on the cycle's branch; built-in Gen adds the snapshot and Hana ends the cycle: one pull request, no .lattice/",
    { timeout: 600_000 },
    async () => {
      const servers = await startAgentServers();
      let repo: Repo | undefined;
      try {
        const cycle = await docLaneCycle(servers, { aya: "codex", sho: "claude", tsugu: "gemini" });
        repo = cycle.repo;
        const start = cycle.start;

        const runs = await runsOf(repo);
        expect(runs.map((r) => [r.role, r.entry_id, r.state, r.reason, r.command.slice(0, 3).join(" ")])).toEqual([
          ["Aya", "req-1", "succeeded", null, "pmagent agent-run codex"],
          ["Sho", "req-1-review", "succeeded", null, "pmagent agent-run claude"],
          ["Tsugu", "req-1-review-apply", "succeeded", null, "pmagent agent-run gemini"],
          ["Gen", "req-1-review-apply-pm_snapshot", "succeeded", null, "pmagent lane-sprite gen"],
          ["Hana", "req-1-review-apply-pm_snapshot-done", "succeeded", null, "pmagent lane-sprite hana"],
        ]);
        const entries = (await pmagentJson<{ items: EntryRow[] }>(repo, ["bb", "list", "--order", "oldest"])).items;
        expect(entries.map((e) => [e.id, e.to, e.status])).toEqual([
          ["req-1", "Aya", "done"],
          ["req-1-review", "Sho", "done"],
          ["req-1-review-apply", "Tsugu", "done"],
          ["req-1-review-apply-pm_snapshot", "Gen", "done"],
          ["req-1-review-apply-pm_snapshot-done", "Hana", "done"],
          ["req-1-review-apply-pm_snapshot-done-cycle_done", "Human", "open"],
        ]);
        // Sho read Aya's file; Tsugu's task named the review Sho wrote.
        expect(JSON.stringify(servers.claude.requests[1]!.body)).toContain("Codex proposed this update");
        expect(JSON.stringify(servers.gemini.requests[0]!.body)).toContain(REVIEW_FILE);

        const snapshot = git(repo.bare, "ls-tree", "-r", "--name-only", DOC_BRANCH, "reports/pm_snapshots/");
        expect(snapshot).toMatch(/^reports\/pm_snapshots\/\d{4}-\d\d-\d\d_demo\.md$/);
        expect(commitsOf(repo, `${start}..${DOC_BRANCH}`)).toEqual([
          { author: "Aya", subject: "Aya: req-1", files: [PROPOSAL_FILE] },
          { author: "Sho", subject: "Sho: req-1-review", files: [REVIEW_FILE] },
          { author: "Tsugu", subject: "Tsugu: req-1-review-apply", files: ["STATE/current_state.md"] },
          { author: "Gen", subject: "Gen: req-1-review-apply-pm_snapshot", files: [snapshot] },
        ]);
        expect(git(repo.bare, "show", `${DOC_BRANCH}:STATE/current_state.md`)).toBe(`${STATE_DOC}\n${APPENDED}`);
        // Gen and Hana learn of the cycle's pull request from the supervisor's refs (the agent as Tsugu reported none).
        const snapshotText = git(repo.bare, "show", `${DOC_BRANCH}:${snapshot}`);
        expect(snapshotText).toContain("1 update(s) accepted and applied");
        expect(snapshotText).toContain("- Pull request #1 is open for review.");
        expect(entries.at(-1)!.payload.summary).toBe(
          `doc_update cycle req-1 is done: pull request #1 to review, PM snapshot ${snapshot}`,
        );

        // One pull request (opened with Tsugu's change, following Gen's), its diff every role's work.
        const head = git(repo.bare, "rev-parse", DOC_BRANCH);
        const prs = (await pmagentJson<{ items: PullRow[] }>(repo, ["prs"])).items;
        expect(prs.map((p) => [p.number, p.head, p.base, p.state, p.head_sha])).toEqual([
          [1, DOC_BRANCH, "main", "open", head],
        ]);
        expect(git(repo.bare, "diff", "--name-only", `main...${DOC_BRANCH}`).split("\n")).toEqual(
          [PROPOSAL_FILE, REVIEW_FILE, snapshot, "STATE/current_state.md"].sort(),
        );

        const status = await pmagentJson<KaiStatus>(repo, ["kai", "status"]);
        expect(status.payload.data.cycle).toMatchObject({ root_entry_id: "req-1", status: "completed" });
        // Usage counts the runs that reported some: the three agents (Gen and Hana use no model).
        expect(status.payload.data.usage.by_cycle.map((c) => [c.key, c.runs])).toEqual([["req-1", 3]]);
      } finally {
        await servers.close();
        if (repo) rmSync(dirname(repo.dir), { recursive: true, force: true });
      }
    },
  );
});
