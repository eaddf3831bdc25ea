/**
 * `pmagent agent-run AGENT`: the sprite process of an agent runner. It runs inside the sprite's
 * sandbox, starts the agent's CLI non-interactively in the workspace, maps the CLI's JSON stream
 * to Lattice events (written as every sprite writes them: outbox, then a LATTICE_EVENT line on
 * stdout), prints the LATTICE_EVENT lines of the agent's own commands as they are, and ends the
 * run with COMPLETED or ERROR unless the agent emitted its own (or WAITING). The supervisor reads
 * this process like any sprite: its ingest and its exactly-once dedupe are unchanged.
 */
import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { UsageError, writeFileAtomic, type Redactor } from "../../core/index.js";
import { followUpOf, outboxPath } from "../protocol/index.js";
import { findExecutable, SANDBOX_WORKSPACE } from "../sandbox/index.js";
import { markResumed, readResume, Sprite } from "../sprite/index.js";
import { clip, MESSAGE_CHARS, refusalReason } from "./events.js";
import { protocolInstructions, resumeText, taskText } from "./instructions.js";
import { driverFor } from "./registry.js";
import { changedSince, gitSnapshot } from "./workspace-changes.js";
import { newStreamState, type AgentName, type AgentSettings } from "./types.js";

export interface AgentRunOptions {
  agent: AgentName;
  model?: string;
  baseUrl?: string;
  prompt?: string;
  args?: string[];
  /** The model key (the supervisor sends it on stdin); by hand, read from `keyEnv` in the environment. */
  apiKey?: string;
  env?: NodeJS.ProcessEnv;
}

/** The agent CLI's entry: its package's bin in pmagent's node_modules, else the command on PATH. */
export function findAgentCli(packageName: string, binName: string, path: string): string[] | null {
  try {
    const require = createRequire(import.meta.url);
    const pkgFile = require.resolve(`${packageName}/package.json`);
    const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { bin?: string | Record<string, string> };
    const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.[binName];
    // A JavaScript bin runs under this node; a native one (Claude Code's) on its own.
    if (bin)
      return /\.[cm]?js$/.test(bin) ? [process.execPath, join(dirname(pkgFile), bin)] : [join(dirname(pkgFile), bin)];
  } catch {
    // not installed beside pmagent
  }
  const onPath = findExecutable(binName, path);
  return onPath ? [onPath] : null;
}

/** Where the agent's session id is kept between attempts (the sprite's private HOME, which a checkpoint restore does not touch). */
const sessionFile = (home: string, agent: string) => join(home, ".pmagent-agent", `${agent}.session.json`);

function readSession(home: string, agent: string): string | null {
  try {
    return (JSON.parse(readFileSync(sessionFile(home, agent), "utf8")) as { session_id?: string }).session_id ?? null;
  } catch {
    return null;
  }
}

function saveSession(home: string, agent: string, sessionId: string): void {
  mkdirSync(dirname(sessionFile(home, agent)), { recursive: true, mode: 0o700 });
  writeFileSync(sessionFile(home, agent), `${JSON.stringify({ session_id: sessionId })}\n`, { mode: 0o600 });
}

function fileSize(path: string): number {
  try {
    const fd = openSync(path, "r");
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/** What the agent wrote to the outbox itself since `offset`: its event types (it may end the run on its own) and the files it declared (ARTIFACT kind file). */
function outboxSince(
  path: string,
  offset: number,
  spriteId: string,
  workspace: string,
): { types: Set<string>; files: Set<string> } {
  const types = new Set<string>();
  const files = new Set<string>();
  const out = { types, files };
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return out;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return out;
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    for (const line of buf.toString("utf8").split("\n")) {
      try {
        const e = JSON.parse(line) as {
          event_type?: string;
          sprite_id?: string;
          payload?: { kind?: unknown; ref?: unknown };
        };
        if (e.sprite_id !== spriteId || !e.event_type) continue;
        types.add(e.event_type);
        if (e.event_type === "ARTIFACT" && e.payload?.kind === "file" && typeof e.payload.ref === "string")
          files.add(workspacePath(e.payload.ref, workspace));
      } catch {
        // not an event line: the supervisor reports it
      }
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** A path as the repository knows it: relative to the workspace (or to /workspace, its sandbox mount). */
function workspacePath(ref: string, workspace: string): string {
  for (const root of [workspace, SANDBOX_WORKSPACE]) if (ref.startsWith(`${root}/`)) return ref.slice(root.length + 1);
  return ref;
}

/** Files larger than this in the agent's HOME are not scrubbed (caches, not transcripts). */
const SCRUB_MAX_BYTES = 16 * 1024 * 1024;

/** Rewrite every text file under `dir` that holds a secret, with the secret redacted (no link followed). */
function scrubFiles(dir: string, redactor: Redactor): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) scrubFiles(path, redactor);
    if (!st?.isFile() || st.size > SCRUB_MAX_BYTES) continue;
    const text = readFileSync(path, "utf8");
    if (text.includes("\0") || !redactor.suspect(text)) continue;
    const clean = redactor.redact(text);
    if (clean !== text) writeFileAtomic(path, clean, st.mode & 0o777);
  }
}

function readEntry(env: NodeJS.ProcessEnv): Record<string, unknown> | null {
  const file = env.PMAGENT_ENTRY_FILE;
  if (!file || !existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
}

/** Run the agent once (a new session, or the saved one resumed with resume.json's inputs); resolves with the exit code to end with. */
export async function runAgent(o: AgentRunOptions): Promise<number> {
  const env = o.env ?? process.env;
  const driver = driverFor(o.agent);
  // The key never lands in an event: the agent passes its environment to the commands it runs.
  const sprite = new Sprite({ env, secrets: o.apiKey ? [o.apiKey] : [] });
  const workspace = sprite.workspace;
  const home = env.HOME;
  if (!home)
    throw new UsageError(
      "agent_home_missing",
      "HOME is not set: the agent needs a private home for its configuration and sessions",
    );
  const cli = findAgentCli(driver.packageName, driver.binName, env.PATH ?? "");
  if (!cli) {
    sprite.error(
      `${driver.binName} is not installed: install ${driver.packageName} (npm install -g ${driver.packageName}) where pmagent runs`,
      { agent: o.agent },
    );
    return 1;
  }
  const settings: AgentSettings = {
    model: o.model,
    baseUrl: o.baseUrl ?? (env[driver.baseUrlEnv] || undefined),
    apiKey: o.apiKey,
    args: o.args ?? [],
    workspace,
    home,
  };
  const instructions = protocolInstructions({
    spriteId: sprite.spriteId,
    workItemId: sprite.workItemId,
    workspace,
    sandboxed: env.LATTICE_SANDBOX === "bwrap",
  });
  const agentEnv = driver.prepare(settings, instructions);

  const { resume, key, replayed } = readResume(workspace, { mark: false });
  const saved = readSession(home, o.agent);
  const sessionId = resume && saved ? saved : null;
  // The outcomes the role routes on (config on_outcome), as the supervisor passed them.
  const outcomes = (env.PMAGENT_OUTCOMES ?? "").split(",").filter((x) => x !== "");
  const task = resume
    ? saved
      ? resumeText(resume)
      : `${taskText(o.prompt, readEntry(env), outcomes)}\n\n${resumeText(resume)}`
    : taskText(o.prompt, readEntry(env), outcomes);
  if (resume && key) markResumed(workspace, key);
  // A person's follow-up message is part of the conversation: recorded as the agent hears it.
  const followUp = resume && !replayed ? followUpOf(resume) : null;
  if (followUp !== null)
    sprite.info(clip(followUp, MESSAGE_CHARS), { kind: "follow_up", metadata: { agent: o.agent } });

  const before = gitSnapshot(workspace);
  const outbox = outboxPath(workspace);
  const outboxStart = fileSize(outbox);
  const state = newStreamState();
  state.sessionId = sessionId;
  state.model = settings.model ?? null;

  const child = spawn(cli[0]!, [...cli.slice(1), ...driver.argv(settings, sessionId)], {
    cwd: workspace,
    env: { ...driver.envDefaults, ...env, ...agentEnv },
    stdio: ["pipe", "pipe", "pipe"],
  });
  // The task goes on stdin: no argument list (visible to every process) carries resume inputs.
  child.stdin.on("error", () => undefined);
  child.stdin.end(task);
  const exited = new Promise<{ code: number | null; error?: string }>((done) => {
    child.once("error", (e) => done({ code: null, error: e.message }));
    child.once("close", (code, signal) => done({ code: code ?? (signal ? 128 : 1) }));
  });
  // Its stderr is passed on as it is; a driver that finds events there reads it line by line.
  const mapStderr = driver.mapStderr?.bind(driver);
  const stderrDone = new Promise<void>((done) => {
    if (!mapStderr) {
      child.stderr.pipe(process.stderr, { end: false });
      child.stderr.once("close", () => done());
      return;
    }
    const errLines = createInterface({ input: child.stderr, crlfDelay: Infinity });
    errLines.on("line", (line) => {
      process.stderr.write(`${sprite.redactor ? sprite.redactor.redact(line) : line}\n`);
      for (const e of mapStderr(line, state)) sprite.emit(e.type, e.payload as never);
    });
    errLines.once("close", () => done());
  });
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  for await (const line of lines) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      process.stderr.write(`${sprite.redactor ? sprite.redactor.redact(line) : line}\n`);
      continue;
    }
    if (parsed === null || typeof parsed !== "object") continue;
    const hadSession = state.sessionId;
    const result = driver.mapLine(parsed, state);
    if (state.sessionId && state.sessionId !== hadSession) saveSession(home, o.agent, state.sessionId);
    for (const e of result.events) sprite.emit(e.type, e.payload as never);
    for (const l of result.passthrough) process.stdout.write(`${l}\n`);
  }
  const exit = await exited;
  if (!exit.error) await stderrDone;
  // The agent's own session files (its transcript holds its commands' output) keep no key.
  if (sprite.redactor) scrubFiles(home, sprite.redactor);
  // Text still streaming when the CLI ended.
  for (const e of driver.mapLine({ type: "end" }, state).events) sprite.emit(e.type, e.payload as never);

  const own = outboxSince(outbox, outboxStart, sprite.spriteId, workspace);
  const changes = changedSince(workspace, before, state.changedFiles);
  // Each changed file once: not again when the agent declared it itself.
  for (const c of changes) {
    if (c.kind === "commit") sprite.artifact("commit", { ref: c.ref, metadata: { agent: o.agent } });
    else if (!own.files.has(c.path))
      sprite.artifact("file", { ref: c.ref, metadata: { agent: o.agent, path: c.path } });
  }
  if (own.types.has("WAITING") || own.types.has("COMPLETED") || own.types.has("ERROR")) return exit.code ?? 1;
  // The CLI refused the agent's work and nothing else came of it (no change, no artifact or action of its own): not a success.
  const workDone = changes.length > 0 || own.types.has("ARTIFACT") || own.types.has("ACTION_REQUEST");
  if (exit.code === 0 && !state.failure && state.refused.length > 0 && !workDone) {
    sprite.error(clip(refusalReason(o.agent, state.refused, state.lastMessage), MESSAGE_CHARS), {
      agent: o.agent,
      refused: state.refused.map((r) => ({
        tool: r.tool,
        command: r.command === null ? null : clip(r.command, MESSAGE_CHARS),
        reason: clip(r.reason, MESSAGE_CHARS),
      })),
    });
    return 1;
  }
  if (exit.code === 0 && !state.failure) {
    sprite.completed("success", clip(state.lastMessage ?? `${o.agent} finished`, MESSAGE_CHARS));
    return 0;
  }
  const why = exit.error ?? state.failure ?? `${driver.binName} exited with code ${exit.code}`;
  sprite.error(clip(why, MESSAGE_CHARS), {
    agent: o.agent,
    exit_code: exit.code,
    last_message: state.lastMessage === null ? null : clip(state.lastMessage, MESSAGE_CHARS),
  });
  return exit.code || 1;
}
