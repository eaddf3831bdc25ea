/**
 * Whole lane cycles driven as a user drives them — `pmagent init`, `bb post`, `worker --once` in a
 * fresh git repository — with any of the real coding-agent CLIs in a role, each against its
 * scripted local server (fake-openai, fake-anthropic, fake-gemini). A role's agent is scripted the
 * same way whichever it is: one shell tool call, then a final message. Shared by
 * test/lane/team-cycle.test.ts (which asserts) and bench/team-cycle (which times).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runCli } from "./proc.js";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.js";

export type AgentName = "codex" | "claude" | "gemini";
export const AGENTS: readonly AgentName[] = ["codex", "claude", "gemini"];

/** The model keys, in the worker's environment (where FETCH_CREDENTIAL reads them). */
export const AGENT_KEYS = {
  OPENAI_API_KEY: "team-openai-key/Ab12+local",
  ANTHROPIC_API_KEY: "team-anthropic-key/Cd34+local",
  GEMINI_API_KEY: "team-gemini-key/Ef56+local",
};
const CREDENTIAL: Record<AgentName, keyof typeof AGENT_KEYS> = {
  codex: "OPENAI_API_KEY",
  claude: "ANTHROPIC_API_KEY",
  gemini: "GEMINI_API_KEY",
};

export interface AgentServers {
  codex: FakeOpenAI;
  claude: FakeAnthropic;
  gemini: FakeGemini;
  close(): Promise<void>;
}

export async function startAgentServers(): Promise<AgentServers> {
  const [codex, claude, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  return {
    codex,
    claude,
    gemini,
    close: async () => void (await Promise.all([codex.close(), claude.close(), gemini.close()])),
  };
}

/** A role's runner and credentials for this agent against its local server. */
export function agentRole(
  servers: AgentServers,
  agent: AgentName,
): { runner: Record<string, unknown>; credentials: string[] } {
  const model = { codex: "gpt-test", claude: "claude-test", gemini: "gemini-test" }[agent];
  return {
    runner: { agent, model, base_url: servers[agent].baseURL, timeout_s: 180 },
    credentials: [CREDENTIAL[agent]],
  };
}

/** Queue the agent's next turn: one shell tool call running `command`, then `text` as its last message. */
export function scriptShell(servers: AgentServers, agent: AgentName, command: string, text: string): void {
  if (agent === "codex")
    servers.codex.reply({ calls: [{ name: "exec_command", arguments: { cmd: command } }] }, { text });
  else if (agent === "claude")
    servers.claude.reply({ tool: { name: "Bash", input: { command, description: "run" } } }, { text });
  // Gemini CLI refuses $(…) and backticks in a command: scripts here use neither.
  else servers.gemini.reply({ call: { name: "run_shell_command", args: { command } } }, { text });
}

export const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Human", "-c", "user.email=human@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

export interface Repo {
  dir: string;
  /** HOME of the pmagent processes: an empty one, nothing of the host's. */
  home: string;
  /** The forge's bare repository. */
  bare: string;
}

/** A fresh repository with these files committed on main. */
export function freshRepository(prefix: string, files: Record<string, string>): Repo {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(home);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "initial");
  return { dir, home, bare: join(dir, ".pmagent", "forge.git") };
}

/** `pmagent ARGS` in the repository, with the keys and nothing else of the host's environment but PATH; its stdout. */
export async function pmagent(repo: Repo, args: string[]): Promise<string> {
  const r = await runCli(args, { cwd: repo.dir, env: { PATH: process.env.PATH, HOME: repo.home, ...AGENT_KEYS } });
  if (r.code !== 0) throw new Error(`pmagent ${args.join(" ")} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** `pmagent … --format json` parsed. */
export async function pmagentJson<T>(repo: Repo, args: string[]): Promise<T> {
  return JSON.parse(await pmagent(repo, [...args, "--format", "json"])) as T;
}

type RoleConfig = Record<string, unknown> & { name: string };

/** Change roles of the lane in pmagent.config.json (what a user edits). */
export function setRoles(repo: Repo, roles: Record<string, Record<string, unknown>>): void {
  const file = join(repo.dir, "pmagent.config.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as { lanes: Array<{ roles: RoleConfig[] }> };
  for (const [name, change] of Object.entries(roles))
    Object.assign(
      config.lanes[0]!.roles.find((r) => r.name === name)!,
      change,
    );
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/** Each commit of `range` in the forge (oldest first): author, subject and the files it changed. */
export function commitsOf(repo: Repo, range: string): Array<{ author: string; subject: string; files: string[] }> {
  return git(repo.bare, "log", "--reverse", "--format=%H", range)
    .split("\n")
    .filter((sha) => sha !== "")
    .map((sha) => ({
      author: git(repo.bare, "log", "-1", "--format=%an", sha),
      subject: git(repo.bare, "log", "-1", "--format=%s", sha),
      files: git(repo.bare, "diff-tree", "--no-commit-id", "--name-only", "-r", sha)
        .split("\n")
        .filter((f) => f !== ""),
    }));
}

/** A role's runner for one step: an agent, or a plain shell command (a program that speaks no Lattice but `pmagent emit`). */
export type Doer = AgentName | "sh";

function doStep(servers: AgentServers, repo: Repo, role: string, doer: Doer, command: string, text: string): void {
  if (doer === "sh")
    return setRoles(repo, { [role]: { runner: { command: ["sh", "-c", command], timeout_s: 180 }, credentials: [] } });
  setRoles(repo, { [role]: agentRole(servers, doer) });
  scriptShell(servers, doer, command, text);
}

export const CODE_CYCLE = "greet";
export const CODE_BRANCH = `pmagent/code/code/${CODE_CYCLE}`;
export const REVIEW = "greet must end the greeting with an exclamation mark";

/**
 * The code lane (`pmagent init --lane code`), one whole cycle: Developer writes src/greet.py,
 * Reviewer reads it, notes the review in REVIEWS.md and sends it back (changes_requested),
 * Developer fixes it, Reviewer approves (which merges the cycle's pull request). Each step's doer
 * is set in the config before its worker runs, so the Developer of the fix may be another agent.
 * Returns the repository and main's commit before the cycle.
 */
export async function codeLaneCycle(
  servers: AgentServers,
  doers: { developer: Doer; reviewer: Doer; fixer: Doer; approver: Doer },
  prefix = "pmagent-team-code-",
): Promise<{ repo: Repo; start: string }> {
  const repo = freshRepository(prefix, { "README.md": "# greeter\n" });
  await pmagent(repo, ["init", "--lane", "code", "--project-id", "demo"]);
  git(repo.dir, "add", ".");
  git(repo.dir, "commit", "-q", "-m", "pmagent: the code lane");
  const start = git(repo.dir, "rev-parse", "HEAD");
  await pmagent(repo, [
    "bb",
    "post",
    "--id",
    CODE_CYCLE,
    "--to",
    "Developer",
    "--kind",
    "code_request",
    "--summary",
    "Add src/greet.py with greet(name)",
  ]);
  const steps: Array<[string, Doer, string, string]> = [
    [
      "Developer",
      doers.developer,
      `mkdir -p src && printf 'def greet(name):\\n    return "Hello " + name\\n' > src/greet.py`,
      "Wrote src/greet.py.",
    ],
    [
      "Reviewer",
      doers.reviewer,
      `cat src/greet.py && printf '## greet-review\\nchanges requested: ${REVIEW}\\n' >> REVIEWS.md && pmagent emit COMPLETED --status success --outcome changes_requested --summary '${REVIEW}'`,
      "Changes requested.",
    ],
    [
      "Developer",
      doers.fixer,
      `printf 'def greet(name):\\n    return "Hello " + name + "!"\\n' > src/greet.py`,
      "Added the exclamation mark.",
    ],
    [
      "Reviewer",
      doers.approver,
      `cat src/greet.py && printf '## greet-review-fix-review\\napproved\\n' >> REVIEWS.md && pmagent emit COMPLETED --status success --outcome approved --summary 'approved: greet ends with an exclamation mark'`,
      "Approved.",
    ],
  ];
  for (const [role, doer, command, text] of steps) {
    doStep(servers, repo, role, doer, command, text);
    await pmagent(repo, ["worker", "--role", role, "--once"]);
  }
  return { repo, start };
}

export const DOC_CYCLE = "req-1";
export const DOC_BRANCH = `pmagent/layer_b/doc_update/${DOC_CYCLE}`;
export const STATE_DOC =
  "# Current state\n\n## Layer B\n\n- The doc_update lane runs with built-in sprites.\n\n## Goals\n\n- Agents in every role.\n";
export const PROPOSAL_FILE = "reports/doc_update_proposals/req-1.json";
export const REVIEW_FILE = "reports/doc_update_reviews/req-1.json";
export const APPENDED = "### Agents\n\nCodex proposed this update, Claude Code reviewed it, Gemini CLI applied it.";

/**
 * The doc_update lane (`pmagent init`), one whole cycle under one worker for its five roles. With
 * agents, Aya writes the proposal at the roles contract's path and declares it (`pmagent emit
 * ARTIFACT`), Sho reads it and writes the review, Tsugu appends the accepted update to the STATE
 * document and passes the review on; Gen and Hana stay built-in (Gen writes the PM snapshot from
 * the review, Hana routes the end of the cycle). Without agents, every role is built-in.
 */
export async function docLaneCycle(
  servers: AgentServers,
  agents: { aya: AgentName; sho: AgentName; tsugu: AgentName } | null,
  prefix = "pmagent-team-doc-",
): Promise<{ repo: Repo; start: string }> {
  const repo = freshRepository(prefix, { "README.md": "# docs\n", "STATE/current_state.md": STATE_DOC });
  await pmagent(repo, ["init", "--project-id", "demo"]);
  if (agents)
    setRoles(repo, {
      Aya: agentRole(servers, agents.aya),
      Sho: agentRole(servers, agents.sho),
      Tsugu: agentRole(servers, agents.tsugu),
    });
  git(repo.dir, "add", ".");
  git(repo.dir, "commit", "-q", "-m", "pmagent: the doc_update lane");
  const start = git(repo.dir, "rev-parse", "HEAD");
  await pmagent(repo, [
    "bb",
    "post",
    "--id",
    DOC_CYCLE,
    "--to",
    "Aya",
    "--kind",
    "doc_update_proposal_request",
    "--summary",
    "Note the agents in STATE",
    "--target-doc",
    "STATE/current_state.md",
  ]);
  if (agents) {
    const update = {
      id: "u1",
      path: "STATE/current_state.md",
      reason: "agents ran the lane",
      change_type: "append",
      suggested_markdown: APPENDED,
    };
    const proposal = {
      version: "doc_update_proposal_v1",
      cycle_id: DOC_CYCLE,
      request_entry_id: DOC_CYCLE,
      summary: "Note the agents in STATE",
      created_at: "2026-01-15T10:30:00Z",
      updates: [update],
    };
    const review = {
      version: "doc_update_review_v1",
      cycle_id: DOC_CYCLE,
      proposal_summary: "Note the agents in STATE",
      created_at: "2026-01-15T10:31:00Z",
      decisions: [
        {
          update_id: "u1",
          path: "STATE/current_state.md",
          decision: "accept",
          reasons: [],
          lines_before: 9,
          lines_after: 13,
        },
      ],
      accepted: [update],
    };
    const write = (file: string, value: unknown) =>
      `mkdir -p ${dirname(file)} && printf '%s\\n' '${JSON.stringify(value)}' > ${file}`;
    scriptShell(
      servers,
      agents.aya,
      `${write(PROPOSAL_FILE, proposal)} && pmagent emit ARTIFACT --kind doc_update_proposal_v1 --ref ${PROPOSAL_FILE}`,
      "Proposal written.",
    );
    scriptShell(
      servers,
      agents.sho,
      `cat ${PROPOSAL_FILE} && ${write(REVIEW_FILE, review)} && pmagent emit ARTIFACT --kind doc_update_review_v1 --ref ${REVIEW_FILE}`,
      "Accepted u1.",
    );
    scriptShell(
      servers,
      agents.tsugu,
      `printf '\\n${APPENDED.replaceAll("\n", "\\n")}\\n' >> STATE/current_state.md && pmagent emit ARTIFACT --kind doc_update_review_v1 --ref ${REVIEW_FILE}`,
      "Applied u1 to STATE/current_state.md.",
    );
  }
  await pmagent(repo, [
    "worker",
    "--role",
    "Aya",
    "--role",
    "Sho",
    "--role",
    "Tsugu",
    "--role",
    "Gen",
    "--role",
    "Hana",
    "--once",
  ]);
  return { repo, start };
}

export interface RunRow {
  id: string;
  role: string;
  entry_id: string;
  state: string;
  reason: string | null;
  command: string[];
  /** When the run started. */
  created_at: string;
  finished_at: string | null;
  cycle?: { branch: string; commit?: string | null; pull_request?: { number: number } | null; merged?: string | null };
}

export const runsOf = async (repo: Repo) =>
  (await pmagentJson<{ items: RunRow[] }>(repo, ["runs", "list", "--order", "oldest", "--limit", "500"])).items;
