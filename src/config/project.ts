// The config's zod-free half: where the file is, the Project it gives and what the lanes say.
// Commands that only read the config (bb list, runs list, kai status) load this, not the schema.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { NotFoundError, UsageError } from "../core/index.js";
import type { Config, LaneConfig, NextStep, RoleConfig } from "./schema.js";

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

/** The config file a command uses (`configPath`, else found from `cwd`) and its text, unparsed. */
export function readConfigText(options: { cwd?: string; configPath?: string } = {}): {
  configPath: string;
  text: string;
} {
  const cwd = options.cwd ?? process.cwd();
  const configPath = options.configPath ? resolve(cwd, options.configPath) : findConfig(cwd);
  if (!configPath) {
    throw new NotFoundError(
      "config_not_found",
      `no ${CONFIG_FILE} in ${resolve(cwd)} or any parent directory: run \`pmagent init\` in your repository, or pass --config FILE`,
    );
  }
  try {
    return { configPath, text: readFileSync(configPath, "utf8") };
  } catch (err) {
    throw new NotFoundError(
      "config_not_found",
      `cannot read config file ${configPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
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
    const known = allRoles(config)
      .map((r) => r.role.name)
      .join(", ");
    throw new UsageError(
      "unknown_role",
      `role "${roleName}" is not configured in any lane (configured roles: ${known})`,
    );
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
  for (let stripped = true; stripped;) {
    stripped = false;
    for (const role of lane.roles) {
      for (const suffix of [
        role.next?.id_suffix,
        ...(role.routes ?? []).map((r) => r.id_suffix),
        ...Object.values(role.on_outcome ?? {}).map((r) => r.id_suffix),
      ]) {
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
export function nextStep(
  role: RoleConfig,
  entry: { kind: string; payload: Record<string, unknown> },
  outcome?: string,
): NextStep | undefined {
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
