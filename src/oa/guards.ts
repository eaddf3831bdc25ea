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
/** A shipped guard's timeout unless oa.guards.<name> configures one. */
export const SHIPPED_GUARD_TIMEOUT_MS = 30_000;

export interface OAGuardRun {
  guard: string;
  exit_code: number;
  output: unknown;
}

/** The guards the repository ships: scripts/guards/guard_<name>.py, by name. */
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
    if (m) out[m[1]!] = ["python3", `${SHIPPED_GUARDS_DIR}/${f}`];
  }
  return out;
}

/** Every guard oa.guard.run may run: the built-in one, the configured ones and the shipped ones. */
export function guardNames(ws: OAWorkspace): string[] {
  return [...new Set([BUILTIN_GUARD, ...Object.keys(ws.oa.guards), ...Object.keys(shippedGuards(ws))])];
}

/**
 * `oa.guard.run(name)`: a guard configured in `oa.guards` (argv, no shell), else one the
 * repository ships in scripts/guards/ (run with python3), else the built-in oa_state guard.
 * A guard's verdict is its JSON on stdout; a non-zero exit is a verdict too, not an error.
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
  const text = stdout.trim();
  let output: unknown;
  try {
    output = JSON.parse(text);
  } catch {
    const excerpt = redactor.redact(text.slice(0, 200));
    throw new OAToolError("oa_guard_invalid_output", `guard "${name}" did not print JSON on stdout (exit ${code}); it printed: ${excerpt === "" ? "(nothing)" : JSON.stringify(excerpt)}`, { kind: "unavailable" });
  }
  return { guard: name, exit_code: code, output: redactor.redactValue(output) };
}

function spawnGuard(cwd: string, name: string, command: string[], timeoutMs: number): Promise<{ code: number; stdout: string }> {
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
      finish(() => reject(new OAToolError("oa_guard_timeout", `guard "${name}" did not finish within ${timeoutMs} ms (raise oa.guards.${name}.timeout_ms if it needs longer)`, { kind: "unavailable" })));
    }, timeoutMs);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      if (stdout.length > MAX_OUTPUT) {
        child.kill("SIGKILL");
        finish(() => reject(new OAToolError("oa_guard_invalid_output", `guard "${name}" printed more than ${MAX_OUTPUT} bytes`, { kind: "unavailable" })));
      }
    });
    child.on("error", (err) =>
      finish(() => reject(new OAToolError("oa_guard_failed", `cannot start guard "${name}" (${command[0]}): ${(err as NodeJS.ErrnoException).code ?? err.message}`, { kind: "unavailable" }))),
    );
    child.on("close", (code, signal) => finish(() => resolve({ code: code ?? (signal ? 128 : 1), stdout })));
  });
}
