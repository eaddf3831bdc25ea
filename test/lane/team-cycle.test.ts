/**
 * Whole lane cycles with the real coding-agent CLIs in the roles, each against a scripted local
 * server answering in its API's streaming format (OpenAI Responses for Codex, Anthropic Messages
 * for Claude Code, Gemini streamGenerateContent for Gemini CLI), driven as a user drives them:
 * `pmagent init`, `pmagent bb post`, `pmagent worker --once`, `pmagent prs`, `pmagent kai status`.
 *
 * SQLite only: what is under test is work passing between agents on a cycle's branch (git, the
 * forge, the CLIs), which does not depend on the store; both stores are covered by the supervisor's
 * own cycle tests (test/lattice/supervisor/cycle.test.ts).
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runCli } from "../helpers/proc.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { startFakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini } from "../helpers/fake-gemini.js";

const KEYS = { OPENAI_API_KEY: "team-openai-key/Ab12+local", ANTHROPIC_API_KEY: "team-anthropic-key/Cd34+local", GEMINI_API_KEY: "team-gemini-key/Ef56+local" };

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=Human", "-c", "user.email=human@example.invalid", ...args], { cwd, encoding: "utf8" }).trim();

/** A fresh repository with one commit on main, as a user starts from. */
function freshRepository(prefix: string, files: Record<string, string>): { dir: string; home: string } {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(dir);
  mkdirSync(home);
  git(dir, "init", "-q", "-b", "main");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "initial");
  return { dir, home };
}

/** `pmagent ARGS` in the repository, keys in the environment (where FETCH_CREDENTIAL reads them), nothing else of the host's. */
async function pmagent(dir: string, home: string, args: string[]): Promise<string> {
  const r = await runCli(args, { cwd: dir, env: { PATH: process.env.PATH, HOME: home, ...KEYS } });
  if (r.code !== 0) throw new Error(`pmagent ${args.join(" ")} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

type Role = { name: string; runner?: Record<string, unknown>; credentials?: string[] };
type Config = { lanes: Array<{ roles: Role[] }> };

function editRoles(dir: string, edit: (roles: Role[]) => void): void {
  const file = join(dir, "pmagent.config.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as Config;
  edit(config.lanes[0]!.roles);
  writeFileSync(file, JSON.stringify(config, null, 2));
}

const role = (roles: Role[], name: string) => roles.find((r) => r.name === name)!;

/** Each commit of `range` (oldest first): author, subject and the files it changed. */
function commitsOf(bare: string, range: string): Array<{ author: string; subject: string; files: string[] }> {
  return git(bare, "log", "--reverse", "--format=%H", range)
    .split("\n")
    .filter((sha) => sha !== "")
    .map((sha) => ({
      author: git(bare, "log", "-1", "--format=%an", sha),
      subject: git(bare, "log", "-1", "--format=%s", sha),
      files: git(bare, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split("\n").filter((f) => f !== ""),
    }));
}

interface RunRow {
  role: string;
  entry_id: string;
  state: string;
  reason: string | null;
  command: string[];
  cycle?: { branch: string; commit?: string | null; pull_request?: { number: number } | null; merged?: string | null };
}

interface KaiStatus {
  payload: { data: { cycle: Record<string, unknown>; usage: { by_cycle: Array<{ key: string; runs: number }> } } };
}

describe("the code lane with Codex, Claude Code and Gemini CLI", () => {
  it(
    "Developer (Codex) writes, Reviewer (Claude) requests changes, Developer (Gemini) fixes with the review in its task, Reviewer approves: one merged pull request with every role's commit and no .lattice/",
    { timeout: 600_000 },
    async () => {
      const openai = await startFakeOpenAI();
      const anthropic = await startFakeAnthropic();
      const gemini = await startFakeGemini();
      const { dir, home } = freshRepository("pmagent-team-code-", { "README.md": "# greeter\n" });
      try {
        await pmagent(dir, home, ["init", "--lane", "code", "--project-id", "demo"]);
        editRoles(dir, (roles) => {
          role(roles, "Developer").runner = { agent: "codex", model: "gpt-test", base_url: openai.baseURL, timeout_s: 180 };
          role(roles, "Reviewer").runner = { agent: "claude", model: "claude-test", base_url: anthropic.baseURL, timeout_s: 180 };
        });
        git(dir, "add", ".");
        git(dir, "commit", "-q", "-m", "pmagent: the code lane");
        const start = git(dir, "rev-parse", "HEAD");
        await pmagent(dir, home, ["bb", "post", "--id", "greet", "--to", "Developer", "--kind", "code_request", "--summary", "Add src/greet.py with greet(name)"]);

        // Round 1. Developer (Codex): a shell tool call writes the file.
        openai.reply({ calls: [{ name: "exec_command", arguments: { cmd: `mkdir -p src && printf 'def greet(name):\\n    return "Hello " + name\\n' > src/greet.py` } }] }, { text: "Wrote src/greet.py." });
        await pmagent(dir, home, ["worker", "--role", "Developer", "--once"]);
        // Reviewer (Claude Code): reads the Developer's file, notes the review, sends the work back.
        const review = "greet must end the greeting with an exclamation mark";
        anthropic.reply(
          { tool: { name: "Bash", input: { command: `cat src/greet.py && printf '## greet-review\\nchanges requested: ${review}\\n' >> REVIEWS.md && pmagent emit COMPLETED --status success --outcome changes_requested --summary '${review}'`, description: "review" } } },
          { text: "Changes requested." },
        );
        await pmagent(dir, home, ["worker", "--role", "Reviewer", "--once"]);

        // Round 2: the Developer's runner is now Gemini CLI (a user switching agents mid-cycle).
        editRoles(dir, (roles) => {
          role(roles, "Developer").runner = { agent: "gemini", model: "gemini-test", base_url: gemini.baseURL, timeout_s: 180 };
          role(roles, "Developer").credentials = ["GEMINI_API_KEY"];
        });
        gemini.reply({ call: { name: "run_shell_command", args: { command: `printf 'def greet(name):\\n    return "Hello " + name + "!"\\n' > src/greet.py` } } }, { text: "Added the exclamation mark." });
        anthropic.reply(
          { tool: { name: "Bash", input: { command: `cat src/greet.py && printf '## greet-review-fix-review\\napproved\\n' >> REVIEWS.md && pmagent emit COMPLETED --status success --outcome approved --summary 'approved: greet ends with an exclamation mark'`, description: "review" } } },
          { text: "Approved." },
        );
        await pmagent(dir, home, ["worker", "--role", "Developer", "--role", "Reviewer", "--once"]);

        const runs = (JSON.parse(await pmagent(dir, home, ["runs", "list", "--order", "oldest", "--format", "json"])) as { items: RunRow[] }).items;
        expect(runs.map((r) => [r.role, r.entry_id, r.state, r.reason, r.command.slice(0, 3).join(" ")])).toEqual([
          ["Developer", "greet", "succeeded", null, "pmagent agent-run codex"],
          ["Reviewer", "greet-review", "succeeded", null, "pmagent agent-run claude"],
          ["Developer", "greet-review-fix", "succeeded", null, "pmagent agent-run gemini"],
          ["Reviewer", "greet-review-fix-review", "succeeded", null, "pmagent agent-run claude"],
        ]);

        // The entries chain through the review and back; the cycle ends with Human.
        const entries = (JSON.parse(await pmagent(dir, home, ["bb", "list", "--order", "oldest", "--format", "json"])) as { items: Array<{ id: string; to: string; kind: string; status: string; payload: { details?: Record<string, unknown>; refs?: Record<string, unknown> } }> }).items;
        expect(entries.map((e) => [e.id, e.to, e.kind, e.status])).toEqual([
          ["greet", "Developer", "code_request", "done"],
          ["greet-review", "Reviewer", "code_review_request", "done"],
          ["greet-review-fix", "Developer", "code_fix_request", "done"],
          ["greet-review-fix-review", "Reviewer", "code_review_request", "done"],
          ["greet-review-fix-review-done", "Human", "code_cycle_done", "open"],
        ]);
        const branch = "pmagent/code/code/greet";
        const fix = entries.find((e) => e.id === "greet-review-fix")!;
        expect(fix.payload.details).toMatchObject({ outcome: "changes_requested", from_role: "Reviewer", review });
        // Each entry refers to the commit the role before handed on.
        expect(entries.slice(1, 4).map((e) => e.payload.refs?.commit)).toEqual(runs.slice(0, 3).map((r) => r.cycle?.commit));

        // The Reviewer read the Developer's file (its tool result went back to the model)…
        expect(JSON.stringify(anthropic.requests[1]!.body)).toContain('return \\"Hello \\" + name');
        // …and the review reached the Developer's second task, with the agent now Gemini.
        const fixTask = JSON.stringify(gemini.requests[0]!.body);
        expect(fixTask).toContain(review);
        expect(fixTask).toContain("greet-review-fix");
        expect(JSON.stringify(anthropic.requests[2]!.body)).toContain("changes_requested");

        // One commit per role and round on the cycle's branch, each holding that role's work.
        const bare = join(dir, ".pmagent", "forge.git");
        expect(commitsOf(bare, `${start}..${branch}`)).toEqual([
          { author: "Developer", subject: "Developer: greet", files: ["src/greet.py"] },
          { author: "Reviewer", subject: "Reviewer: greet-review", files: ["REVIEWS.md"] },
          { author: "Developer", subject: "Developer: greet-review-fix", files: ["src/greet.py"] },
          { author: "Reviewer", subject: "Reviewer: greet-review-fix-review", files: ["REVIEWS.md"] },
        ]);
        const head = git(bare, "rev-parse", branch);
        expect(runs[3]!.cycle).toMatchObject({ commit: head, pull_request: { number: 1 }, merged: head });

        // One pull request, merged by the Reviewer's approval: main is the branch's head.
        const prs = (JSON.parse(await pmagent(dir, home, ["prs", "--format", "json"])) as { items: Array<{ number: number; head: string; base: string; state: string; head_sha: string }> }).items;
        expect(prs.map((p) => [p.number, p.head, p.base, p.state, p.head_sha])).toEqual([[1, branch, "main", "merged", head]]);
        expect(git(bare, "rev-parse", "main")).toBe(head);
        expect(git(bare, "diff", "--name-only", start, "main").split("\n")).toEqual(["REVIEWS.md", "src/greet.py"]);
        expect(git(bare, "show", "main:src/greet.py")).toBe('def greet(name):\n    return "Hello " + name + "!"');
        expect(git(bare, "show", "main:REVIEWS.md")).toBe(`## greet-review\nchanges requested: ${review}\n## greet-review-fix-review\napproved`);

        // Kai's lane status reads the finished cycle, its four runs and their usage.
        const status = JSON.parse(await pmagent(dir, home, ["kai", "status", "--lane", "code/code", "--format", "json"])) as KaiStatus;
        expect(status.payload.data.cycle).toMatchObject({ root_entry_id: "greet", status: "completed" });
        expect(status.payload.data.usage.by_cycle.map((c) => [c.key, c.runs])).toEqual([["greet", 4]]);
      } finally {
        await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
      }
    },
  );
});

const STATE_DOC = "# Current state\n\n## Layer B\n\n- The doc_update lane runs with built-in sprites.\n\n## Goals\n\n- Agents in every role.\n";

describe("the doc_update lane with Codex as Aya, Claude Code as Sho and Gemini CLI as Tsugu", () => {
  it(
    "Aya's proposal, Sho's review and Tsugu's STATE change are commits on the cycle's branch; built-in Gen adds the snapshot and Hana ends the cycle: one pull request, no .lattice/",
    { timeout: 600_000 },
    async () => {
      const openai = await startFakeOpenAI();
      const anthropic = await startFakeAnthropic();
      const gemini = await startFakeGemini();
      const { dir, home } = freshRepository("pmagent-team-doc-", { "README.md": "# docs\n", "STATE/current_state.md": STATE_DOC });
      try {
        await pmagent(dir, home, ["init", "--project-id", "demo"]);
        // Gen and Hana stay built-in: Gen writes the PM snapshot from the review, Hana routes the end of the cycle.
        editRoles(dir, (roles) => {
          Object.assign(role(roles, "Aya"), { runner: { agent: "codex", model: "gpt-test", base_url: openai.baseURL, timeout_s: 180 }, credentials: ["OPENAI_API_KEY"] });
          Object.assign(role(roles, "Sho"), { runner: { agent: "claude", model: "claude-test", base_url: anthropic.baseURL, timeout_s: 180 }, credentials: ["ANTHROPIC_API_KEY"] });
          Object.assign(role(roles, "Tsugu"), { runner: { agent: "gemini", model: "gemini-test", base_url: gemini.baseURL, timeout_s: 180 }, credentials: ["GEMINI_API_KEY"] });
        });
        git(dir, "add", ".");
        git(dir, "commit", "-q", "-m", "pmagent: the doc_update lane");
        const start = git(dir, "rev-parse", "HEAD");
        await pmagent(dir, home, ["bb", "post", "--id", "req-1", "--to", "Aya", "--kind", "doc_update_proposal_request", "--summary", "Note the agents in STATE", "--target-doc", "STATE/current_state.md"]);

        const appended = "### Agents\\n\\nCodex proposed this update, Claude Code reviewed it, Gemini CLI applied it.";
        const update = { id: "u1", path: "STATE/current_state.md", reason: "agents ran the lane", change_type: "append", suggested_markdown: appended.replaceAll("\\n", "\n") };
        const proposal = { version: "doc_update_proposal_v1", cycle_id: "req-1", request_entry_id: "req-1", summary: "Note the agents in STATE", created_at: "2026-01-15T10:30:00Z", updates: [update] };
        const review = {
          version: "doc_update_review_v1",
          cycle_id: "req-1",
          proposal_summary: "Note the agents in STATE",
          created_at: "2026-01-15T10:31:00Z",
          decisions: [{ update_id: "u1", path: "STATE/current_state.md", decision: "accept", reasons: [], lines_before: 9, lines_after: 13 }],
          accepted: [update],
        };
        const proposalFile = "reports/doc_update_proposals/req-1.json";
        const reviewFile = "reports/doc_update_reviews/req-1.json";
        // Aya (Codex) writes the proposal at the roles contract's path and declares it.
        openai.reply(
          { calls: [{ name: "exec_command", arguments: { cmd: `mkdir -p reports/doc_update_proposals && printf '%s\\n' '${JSON.stringify(proposal)}' > ${proposalFile} && pmagent emit ARTIFACT --kind doc_update_proposal_v1 --ref ${proposalFile}` } }] },
          { text: "Proposal written." },
        );
        // Sho (Claude Code) reads it, writes the review and declares it.
        anthropic.reply(
          { tool: { name: "Bash", input: { command: `cat ${proposalFile} && mkdir -p reports/doc_update_reviews && printf '%s\\n' '${JSON.stringify(review)}' > ${reviewFile} && pmagent emit ARTIFACT --kind doc_update_review_v1 --ref ${reviewFile}`, description: "review" } } },
          { text: "Accepted u1." },
        );
        // Tsugu (Gemini CLI) applies the accepted update and passes the review on to Gen.
        gemini.reply(
          { call: { name: "run_shell_command", args: { command: `printf '\\n${appended}\\n' >> STATE/current_state.md && pmagent emit ARTIFACT --kind doc_update_review_v1 --ref ${reviewFile}` } } },
          { text: "Applied u1 to STATE/current_state.md." },
        );
        await pmagent(dir, home, ["worker", "--role", "Aya", "--role", "Sho", "--role", "Tsugu", "--role", "Gen", "--role", "Hana", "--once"]);

        const runs = (JSON.parse(await pmagent(dir, home, ["runs", "list", "--order", "oldest", "--format", "json"])) as { items: RunRow[] }).items;
        expect(runs.map((r) => [r.role, r.entry_id, r.state, r.reason, r.command.slice(0, 3).join(" ")])).toEqual([
          ["Aya", "req-1", "succeeded", null, "pmagent agent-run codex"],
          ["Sho", "req-1-review", "succeeded", null, "pmagent agent-run claude"],
          ["Tsugu", "req-1-review-apply", "succeeded", null, "pmagent agent-run gemini"],
          ["Gen", "req-1-review-apply-pm_snapshot", "succeeded", null, "pmagent lane-sprite gen"],
          ["Hana", "req-1-review-apply-pm_snapshot-done", "succeeded", null, "pmagent lane-sprite hana"],
        ]);
        const entries = (JSON.parse(await pmagent(dir, home, ["bb", "list", "--order", "oldest", "--format", "json"])) as { items: Array<{ id: string; to: string; status: string; payload: { summary?: string } }> }).items;
        expect(entries.map((e) => [e.id, e.to, e.status])).toEqual([
          ["req-1", "Aya", "done"],
          ["req-1-review", "Sho", "done"],
          ["req-1-review-apply", "Tsugu", "done"],
          ["req-1-review-apply-pm_snapshot", "Gen", "done"],
          ["req-1-review-apply-pm_snapshot-done", "Hana", "done"],
          ["req-1-review-apply-pm_snapshot-done-cycle_done", "Human", "open"],
        ]);
        // Sho read Aya's file; Tsugu's task named the review Sho wrote.
        expect(JSON.stringify(anthropic.requests[1]!.body)).toContain("Codex proposed this update");
        expect(JSON.stringify(gemini.requests[0]!.body)).toContain(reviewFile);

        const bare = join(dir, ".pmagent", "forge.git");
        const branch = "pmagent/layer_b/doc_update/req-1";
        const snapshot = git(bare, "ls-tree", "-r", "--name-only", branch, "reports/pm_snapshots/");
        expect(snapshot).toMatch(/^reports\/pm_snapshots\/\d{4}-\d\d-\d\d-req-1\.md$/);
        expect(commitsOf(bare, `${start}..${branch}`)).toEqual([
          { author: "Aya", subject: "Aya: req-1", files: [proposalFile] },
          { author: "Sho", subject: "Sho: req-1-review", files: [reviewFile] },
          { author: "Tsugu", subject: "Tsugu: req-1-review-apply", files: ["STATE/current_state.md"] },
          { author: "Gen", subject: "Gen: req-1-review-apply-pm_snapshot", files: [snapshot] },
        ]);
        expect(git(bare, "show", `${branch}:STATE/current_state.md`)).toBe(`${STATE_DOC}\n${update.suggested_markdown}`);
        // Gen and Hana learn of the cycle's pull request from the supervisor's refs (the agent as Tsugu reported none).
        expect(git(bare, "show", `${branch}:${snapshot}`)).toContain("1 update(s) accepted and applied");
        expect(git(bare, "show", `${branch}:${snapshot}`)).toContain("- Pull request #1 is open for review.");
        expect(entries.at(-1)!.payload.summary).toBe(`doc_update cycle req-1 is done: pull request #1 to review, PM snapshot ${snapshot}`);

        // One pull request (opened with Tsugu's change, following Gen's), its diff every role's work.
        const head = git(bare, "rev-parse", branch);
        const prs = (JSON.parse(await pmagent(dir, home, ["prs", "--format", "json"])) as { items: Array<{ number: number; head: string; base: string; state: string; head_sha: string }> }).items;
        expect(prs.map((p) => [p.number, p.head, p.base, p.state, p.head_sha])).toEqual([[1, branch, "main", "open", head]]);
        expect(git(bare, "diff", "--name-only", `main...${branch}`).split("\n")).toEqual([proposalFile, reviewFile, snapshot, "STATE/current_state.md"].sort());

        const status = JSON.parse(await pmagent(dir, home, ["kai", "status", "--format", "json"])) as KaiStatus;
        expect(status.payload.data.cycle).toMatchObject({ root_entry_id: "req-1", status: "completed" });
        // Usage counts the runs that reported some: the three agents (Gen and Hana use no model).
        expect(status.payload.data.usage.by_cycle.map((c) => [c.key, c.runs])).toEqual([["req-1", 3]]);
      } finally {
        await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
      }
    },
  );
});
