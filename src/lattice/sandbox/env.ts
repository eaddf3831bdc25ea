/**
 * The sprite's scrubbed environment: an allow-list of the supervisor's variables, never a token,
 * with the run's shims first on its PATH, then the pmagent launcher's directory.
 */
import { delimiter, resolve } from "node:path";
import { UsageError, isSecretEnvName } from "../../core/index.js";

/** Variables passed through from the supervisor's environment; everything else is dropped. */
export const ENV_ALLOW_LIST = [
  "PATH",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
  "NODE_OPTIONS",
] as const;
const ALLOW_PREFIXES = ["LC_"];

/**
 * The coding agents' own endpoint variables (README: an agent's endpoint falls back to its CLI's
 * variable). Passed to sprites only, never with a user or password in the URL; the keys that go
 * with them are credentials a role must be given.
 */
export const ENDPOINT_VARS = ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"] as const;

/** Token-shaped values are never passed, whatever their name. */
function looksLikeToken(value: string): boolean {
  return /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-|AKIA[0-9A-Z]{16})/.test(value);
}

/** Refuse extra variables (config `runner.env`, accepted adjustments) whose names look secret. */
export function checkExtraEnv(env: Record<string, string>, source: string): void {
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError("invalid_sprite_env", `${source}: "${name}" is not a valid environment variable name`);
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

/** The allow-listed variables of `base` (and `more`), never one that looks secret. */
function allowed(base: NodeJS.ProcessEnv, more: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    const listed =
      (ENV_ALLOW_LIST as readonly string[]).includes(name) ||
      more.includes(name) ||
      ALLOW_PREFIXES.some((p) => name.startsWith(p));
    if (listed && !isSecretEnvName(name) && !looksLikeToken(value)) env[name] = value;
  }
  return env;
}

/** A proxy is passed to installers, unless its URL carries a user or password. */
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];

/** A URL with a user or password in it carries a credential. */
const hasUserInfo = (url: string) => /\/\/[^/]*@/.test(url);

/**
 * The environment of a program the supervisor runs on what a sprite made (an installer, git
 * reading a workspace): the sprites' allow-list and the proxies (without credentials), a HOME of
 * its own, no prompts and no system git config. Never the supervisor's tokens.
 */
export function helperEnv(base: NodeJS.ProcessEnv, home: string): Record<string, string> {
  const env = allowed(base, PROXY_VARS);
  for (const v of PROXY_VARS) if (env[v] !== undefined && hasUserInfo(env[v])) delete env[v];
  return {
    ...env,
    PATH: env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    LC_ALL: "C",
  };
}

export function spriteEnv(input: SpriteEnvInput): Record<string, string> {
  const env = allowed(input.base, ENDPOINT_VARS);
  for (const v of ENDPOINT_VARS) if (env[v] !== undefined && hasUserInfo(env[v])) delete env[v];
  const first = input.pathFirst ?? [];
  const rest = (env.PATH ?? "/usr/local/bin:/usr/bin:/bin")
    .split(delimiter)
    .filter((d) => d !== "" && resolve(d) !== resolve(input.shimDir) && !first.includes(d));
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
