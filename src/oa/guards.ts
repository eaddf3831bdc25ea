import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Redactor, isSecretEnvName, secretsFromEnv } from "../core/index.js";
import { OAToolError } from "./errors.js";
import { runOaGuard } from "./guard.js";
import type { OAWorkspace } from "./workspace.js";

/** The guard every project has without configuring it: the OA state guard, in STRICT mode. */
export const BUILTIN_GUARD = "oa_state";
const MAX_OUTPUT = 1024 * 1024;
/** Where a repository ships its guards (the registry's `python scripts/guards/guard_{name}.py`). */
export const SHIPPED_GUARDS_DIR = "scripts/guards";
const SHIPPED_GUARD = /^guard_([a-z0-9_]+)\.py$/;
/**
 * The registry's allowed guard names (OA_TOOLS_REGISTRY.md, oa.guard.run): of the scripts a
 * repository ships, only these are tools; the origin ships a hundred other guards that are not.
 */
export const REGISTRY_GUARDS = [
  "db_health",
  "lm_health",
  "oa_state",
  "agents_md_sync",
  "share_sync",
  "dms_alignment",
  "bootstrap_consistency",
] as const;
const REGISTRY_GUARD_SET: ReadonlySet<string> = new Set(REGISTRY_GUARDS);
/** The line the origin's guards print their verdict on, after their text lines. */
const JSON_LINE = "JSON:";
/** A shipped guard's timeout unless oa.guards.<name> configures one. */
export const SHIPPED_GUARD_TIMEOUT_MS = 30_000;

export interface OAGuardRun {
  guard: string;
  exit_code: number;
  output: unknown;
  /** The text lines a guard printed before its `JSON: {…}` line (the origin's output form). */
  text?: string[];
}

/** The registry's guards the repository ships: scripts/guards/guard_<name>.py, by name. */
export function shippedGuards(ws: OAWorkspace): Record<string, string[]> {
  let files: string[];
  try {
    files = readdirSync(join(ws.root, SHIPPED_GUARDS_DIR));
  } catch {
    return {};
  }
  const out: Record<string, string[]> = {};
  for (const f of files.sort()) {
    const m = SHIPPED_GUARD.exec(f);
    if (m && REGISTRY_GUARD_SET.has(m[1]!)) out[m[1]!] = ["python3", `${SHIPPED_GUARDS_DIR}/${f}`];
  }
  return out;
}

/** Every guard oa.guard.run may run: the built-in one, the configured ones and the registry's shipped ones. */
export function guardNames(ws: OAWorkspace): string[] {
  return [...new Set([BUILTIN_GUARD, ...Object.keys(ws.oa.guards), ...Object.keys(shippedGuards(ws))])];
}

/**
 * `oa.guard.run(name)`: a guard configured in `oa.guards` (argv, no shell), else one of the
 * registry's guards the repository ships in scripts/guards/ (run with python3), else the built-in
 * oa_state guard. A guard's verdict is its JSON on stdout, alone or (the origin's form) on a
 * `JSON: {…}` line after text lines; a non-zero exit is a verdict too, not an error.
 */
export async function runRegisteredGuard(ws: OAWorkspace, name: string): Promise<OAGuardRun> {
  const configured = ws.oa.guards[name];
  const shipped = configured ? undefined : shippedGuards(ws)[name];
  if (!configured && !shipped) {
    if (name === BUILTIN_GUARD) {
      const output = runOaGuard(ws, "STRICT");
      return { guard: name, exit_code: output.ok ? 0 : 1, output };
    }
    throw new OAToolError(
      "oa_unknown_guard",
      `guard "${name}" is not registered (registered guards: ${guardNames(ws).join(", ")}); add it under oa.guards in pmagent.config.json or ship it as ${SHIPPED_GUARDS_DIR}/guard_${name}.py`,
      { kind: "usage" },
    );
  }
  const command = configured?.command ?? shipped!;
  const timeoutMs = configured?.timeout_ms ?? SHIPPED_GUARD_TIMEOUT_MS;
  const redactor = new Redactor(secretsFromEnv());
  const { code, stdout } = await spawnGuard(ws.root, name, command, timeoutMs);
  const { output, text } = parseGuardOutput(name, code, stdout, redactor);
  return {
    guard: name,
    exit_code: code,
    output: redactor.redactValue(output),
    ...(text.length > 0 ? { text: text.map((l) => redactor.redact(l)) } : {}),
  };
}

/**
 * A guard's stdout: one JSON value, or text lines and then one `JSON: {…}` line (the JSON may run
 * on to the end of the output). Anything else is an OAToolError that quotes the start of it.
 */
export function parseGuardOutput(
  name: string,
  code: number,
  stdout: string,
  redactor: Redactor = new Redactor(secretsFromEnv()),
): { output: unknown; text: string[] } {
  const whole = stdout.trim();
  const lines = stdout.split(/\r?\n/);
  const at = lines.findIndex((l) => l.startsWith(JSON_LINE));
  if (at < 0) {
    try {
      return { output: JSON.parse(whole), text: [] };
    } catch {
      const excerpt = redactor.redact(whole.slice(0, 200));
      throw new OAToolError(
        "oa_guard_invalid_output",
        `guard "${name}" did not print JSON on stdout (exit ${code}): expected a JSON value or a line \`${JSON_LINE} {…}\` after its text; it printed: ${excerpt === "" ? "(nothing)" : JSON.stringify(excerpt)}`,
        { kind: "unavailable" },
      );
    }
  }
  const json = [lines[at]!.slice(JSON_LINE.length), ...lines.slice(at + 1)].join("\n").trim();
  try {
    return { output: JSON.parse(json), text: lines.slice(0, at).filter((l) => l.trim() !== "") };
  } catch (err) {
    const excerpt = redactor.redact(json.slice(0, 200));
    throw new OAToolError(
      "oa_guard_invalid_output",
      `guard "${name}" printed a \`${JSON_LINE}\` line that is not valid JSON (exit ${code}): ${redactor.redact((err as Error).message)}; it printed: ${JSON.stringify(excerpt)}`,
      { kind: "unavailable" },
    );
  }
}

function spawnGuard(
  cwd: string,
  name: string,
  command: string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string }> {
  // Guards only read; they get no secrets from pmagent's environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !isSecretEnvName(k)));
  return new Promise((resolve, reject) => {
    const [file, ...args] = command as [string, ...string[]];
    const child = spawn(file, args, { cwd, env, shell: false, stdio: ["ignore", "pipe", "ignore"] });
    let stdout = "";
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(() =>
        reject(
          new OAToolError(
            "oa_guard_timeout",
            `guard "${name}" did not finish within ${timeoutMs} ms (raise oa.guards.${name}.timeout_ms if it needs longer)`,
            { kind: "unavailable" },
          ),
        ),
      );
    }, timeoutMs);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      if (stdout.length > MAX_OUTPUT) {
        child.kill("SIGKILL");
        finish(() =>
          reject(
            new OAToolError("oa_guard_invalid_output", `guard "${name}" printed more than ${MAX_OUTPUT} bytes`, {
              kind: "unavailable",
            }),
          ),
        );
      }
    });
    child.on("error", (err) =>
      finish(() =>
        reject(
          new OAToolError(
            "oa_guard_failed",
            `cannot start guard "${name}" (${command[0]}): ${(err as NodeJS.ErrnoException).code ?? err.message}`,
            { kind: "unavailable" },
          ),
        ),
      ),
    );
    child.on("close", (code, signal) => finish(() => resolve({ code: code ?? (signal ? 128 : 1), stdout })));
  });
}
