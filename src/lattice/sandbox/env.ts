/**
 * The sprite's scrubbed environment: an allow-list of the supervisor's variables, never a token,
 * with the run's shims first on its PATH, then the pmagent launcher's directory.
 */
import { delimiter, resolve } from "node:path";
import { UsageError, isSecretEnvName } from "../../core/index.js";

/** Variables passed through from the supervisor's environment; everything else is dropped. */
export const ENV_ALLOW_LIST = ["PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "NODE_OPTIONS"] as const;
const ALLOW_PREFIXES = ["LC_"];

/** Token-shaped values are never passed, whatever their name. */
function looksLikeToken(value: string): boolean {
  return /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-|AKIA[0-9A-Z]{16})/.test(value);
}

/** Refuse extra variables (config `runner.env`, accepted adjustments) whose names look secret. */
export function checkExtraEnv(env: Record<string, string>, source: string): void {
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError("invalid_sprite_env", `${source}: "${name}" is not a valid environment variable name`);
    if (isSecretEnvName(name) || looksLikeToken(env[name] ?? "")) {
      throw new UsageError(
        "secret_in_sprite_env",
        `${source}: ${name} looks like a secret; sprites never hold credentials (ask for one with ACTION_REQUEST FETCH_CREDENTIAL and a role allowed to have it)`,
      );
    }
  }
}

export interface SpriteEnvInput {
  base: NodeJS.ProcessEnv;
  shimDir: string;
  toolDir: string;
  home: string;
  lattice: Record<string, string>;
  extra: Record<string, string>;
  /** Directories first on the PATH after the shims (accepted environment changes' tools). */
  pathFirst?: readonly string[];
}

export function spriteEnv(input: SpriteEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.base)) {
    if (value === undefined) continue;
    const allowed = (ENV_ALLOW_LIST as readonly string[]).includes(name) || ALLOW_PREFIXES.some((p) => name.startsWith(p));
    if (allowed && !isSecretEnvName(name) && !looksLikeToken(value)) env[name] = value;
  }
  const first = input.pathFirst ?? [];
  const rest = (env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter).filter((d) => d !== "" && resolve(d) !== resolve(input.shimDir) && !first.includes(d));
  Object.assign(env, input.extra, input.lattice, {
    // The shims stay first: an installed tool never shadows the git and gh guards.
    PATH: [input.shimDir, ...first, input.toolDir, ...rest].join(delimiter),
    HOME: input.home,
    // No credential prompts and no user or system git config with stored credentials.
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GH_PROMPT_DISABLED: "1",
  });
  return env;
}
