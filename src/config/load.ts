import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { NotFoundError, UnavailableError, UsageError, parseJsonText, parseWith, writeFileAtomic, ConflictError } from "../core/index.js";
import { ConfigSchema, type Config, type LaneConfig, type NextStep, type RoleConfig } from "./schema.js";
import { defaultConfig, type LaneTemplate } from "./defaults.js";

export const CONFIG_FILE = "pmagent.config.json";

export interface Project {
  /** Directory holding the config file: the repository root. */
  root: string;
  configPath: string;
  config: Config;
}

/** Walk up from `from` to the nearest directory holding pmagent.config.json. */
export function findConfig(from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Parse and validate a config text; errors name the file, the JSON path and what was expected. */
export function parseConfig(text: string, source: string): Config {
  const config = parseWith(ConfigSchema, parseJsonText(text, source, "config_invalid_json"), source, "config_invalid");
  const seen = new Set<string>();
  config.lanes.forEach((lane, i) => {
    const key = `${lane.layer}/${lane.name}`;
    if (seen.has(key)) throw new UsageError("config_invalid", `${source} is invalid:\n  $.lanes[${i}]: lane ${key} is defined twice`);
    seen.add(key);
    const roles = new Set<string>();
    lane.roles.forEach((role, j) => {
      if (roles.has(role.name)) throw new UsageError("config_invalid", `${source} is invalid:\n  $.lanes[${i}].roles[${j}].name: role ${role.name} is defined twice in lane ${key}`);
      roles.add(role.name);
    });
  });
  return config;
}

export function loadProject(options: { cwd?: string; configPath?: string } = {}): Project {
  const cwd = options.cwd ?? process.cwd();
  const configPath = options.configPath ? resolve(cwd, options.configPath) : findConfig(cwd);
  if (!configPath) {
    throw new NotFoundError("config_not_found", `no ${CONFIG_FILE} in ${resolve(cwd)} or any parent directory: run \`pmagent init\` in your repository, or pass --config FILE`);
  }
  let text: string;
  try {
    text = readFileSync(configPath, "utf8");
  } catch (err) {
    throw new NotFoundError("config_not_found", `cannot read config file ${configPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return { root: dirname(configPath), configPath, config: parseConfig(text, configPath) };
}

/** Write the default config into `dir`; refuses to overwrite an existing one unless `force`. */
export function initProject(dir: string, options: { projectId?: string; force?: boolean; lane?: LaneTemplate } = {}): Project {
  const configPath = join(resolve(dir), CONFIG_FILE);
  if (existsSync(configPath) && !options.force) {
    throw new ConflictError("config_exists", `${configPath} already exists (use --force to overwrite it)`);
  }
  const projectId = options.projectId ?? (basename(resolve(dir)).replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "project");
  const text = `${JSON.stringify(defaultConfig(projectId, options.lane), null, 2)}\n`;
  const config = parseConfig(text, configPath);
  writeFileAtomic(configPath, text);
  return { root: dirname(configPath), configPath, config };
}

/** The line `pmagent init` adds to the project's .gitignore: the store, workspaces, runs and checkpoints. */
export const GITIGNORE_LINE = ".pmagent/";
// Lines that already decide about the directory (negations too: the user chose to keep it tracked).
const PMAGENT_DIR_LINE = /^!?\/?\.pmagent(?:\/|\/\*\*?)?$/;

/**
 * Make `<root>/.gitignore` ignore `.pmagent/`: create the file, or append the line once. A file
 * that already has a line about `.pmagent` (`.pmagent`, `/.pmagent/`, `.pmagent/*`, a `!` negation)
 * is left as it is. Keeps the file's line ending (CRLF or LF).
 */
export function ignorePmagentDir(root: string): { path: string; change: "created" | "appended" | "unchanged" } {
  const path = join(resolve(root), ".gitignore");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw new UnavailableError("gitignore_unreadable", `cannot read ${path} (${code ?? "error"}): add the line ${GITIGNORE_LINE} to it yourself`);
    writeFileAtomic(path, `${GITIGNORE_LINE}\n`);
    return { path, change: "created" };
  }
  if (text.split(/\r?\n/).some((line) => PMAGENT_DIR_LINE.test(line.trim()))) return { path, change: "unchanged" };
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const sep = text.length === 0 || text.endsWith("\n") ? "" : eol;
  try {
    appendFileSync(path, `${sep}${GITIGNORE_LINE}${eol}`);
  } catch (err) {
    throw new UnavailableError("gitignore_unwritable", `cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? "error"}): add the line ${GITIGNORE_LINE} to it yourself`);
  }
  return { path, change: "appended" };
}

/**
 * The acting identity of a local session (CLI, MCP on stdio): `--as`, else $PMAGENT_ACTOR, else
 * the first configured human. Over HTTP the identity comes from the bearer token instead.
 */
export function localActor(config: Config, as: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (as !== undefined && as.trim() === "") throw new UsageError("invalid_option", "--as needs an actor name");
  return as ?? (env.PMAGENT_ACTOR || config.humans[0]!);
}

/** All roles of all lanes, with their lane. */
export function allRoles(config: Config): Array<{ lane: LaneConfig; role: RoleConfig }> {
  return config.lanes.flatMap((lane) => lane.roles.map((role) => ({ lane, role })));
}

export function findRole(config: Config, roleName: string): { lane: LaneConfig; role: RoleConfig } {
  const found = allRoles(config).find((r) => r.role.name === roleName);
  if (!found) {
    const known = allRoles(config).map((r) => r.role.name).join(", ");
    throw new UsageError("unknown_role", `role "${roleName}" is not configured in any lane (configured roles: ${known})`);
  }
  return found;
}

export function findLane(config: Config, layer: string, name: string): LaneConfig | undefined {
  return config.lanes.find((l) => l.layer === layer && l.name === name);
}

/**
 * The root request id of a cycle: an entry id with its lane follow-up suffixes removed — every
 * one of them, so both the chained form the origin writes (`X-review-apply`) and the earlier one
 * (`X-apply`) lead back to `X`.
 */
export function cycleRootId(lane: LaneConfig, entryId: string): string {
  let id = entryId;
  for (let stripped = true; stripped; ) {
    stripped = false;
    for (const role of lane.roles) {
      for (const suffix of [role.next?.id_suffix, ...(role.routes ?? []).map((r) => r.id_suffix), ...Object.values(role.on_outcome ?? {}).map((r) => r.id_suffix)]) {
        if (suffix && id.endsWith(suffix) && id.length > suffix.length) {
          id = id.slice(0, -suffix.length);
          stripped = true;
        }
      }
    }
  }
  return id;
}

/**
 * The step a successful run of `role` on `entry` posts: the one for the run's `outcome` in
 * `on_outcome`, else the route for the entry's kind whose
 * `target` is the entry's `payload.target` (or that names none), else the role's `next` when no
 * route is given for that kind. Undefined when the kind's routes take no such target: a router
 * does not guess where an entry goes.
 */
export function nextStep(role: RoleConfig, entry: { kind: string; payload: Record<string, unknown> }, outcome?: string): NextStep | undefined {
  const byOutcome = outcome === undefined ? undefined : role.on_outcome?.[outcome];
  if (byOutcome) return byOutcome;
  const routes = (role.routes ?? []).filter((r) => r.on === entry.kind);
  if (routes.length === 0) return role.next;
  const target = entry.payload.target;
  return routes.find((r) => r.target === undefined || r.target === target);
}

/**
 * The kinds whose successful run by `role` ends the lane: those it sends to a human (by a route,
 * else by `next`), or all it picks when it has no next step. Hana's `hana_task` goes on to Aya or
 * Kai, so routing one does not end a cycle; her `pm_snapshot_done` does.
 */
export function finalKinds(role: RoleConfig, humans: readonly string[]): string[] {
  return role.allowed_kinds.filter((kind) => {
    const routes = (role.routes ?? []).filter((r) => r.on === kind);
    if (routes.length > 0) return routes.some((r) => humans.includes(r.to));
    return role.next === undefined || humans.includes(role.next.to);
  });
}

/**
 * A follow-up's id: the finished entry's id plus the next step's suffix, chained as the origin
 * chains them (`X` → `X-review` → `X-review-apply` → …), so each id names the path of its cycle.
 */
export function followUpId(_lane: LaneConfig, entryId: string, suffix: string): string {
  return `${entryId}${suffix}`;
}
