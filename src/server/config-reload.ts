/**
 * Re-reading pmagent.config.json in a running `serve` (POST /v1/config/reload, SIGHUP): lanes,
 * roles, their runners, budgets and prices are read from the project's config when used, so a
 * role added to the file is served at once. What the server set up from the config at start (the
 * store, the project id, the humans, the server's tokens and limits) needs a restart: a change to
 * it is refused, and so is a config that does not parse; the config in use stays as it was.
 */
import { readFileSync } from "node:fs";
import { parseConfig, type Config, type Project } from "../config/index.js";
import {
  canonicalJson,
  ConflictError,
  isPmagentError,
  UnavailableError,
  UsageError,
  type CodeOf,
} from "../core/index.js";

/** The parts of the config the server reads only at start. */
const AT_START = ["project_id", "storage", "humans", "server"] as const satisfies ReadonlyArray<keyof Config>;

export interface ConfigReload {
  config_path: string;
  /** False when the file says what the config in use says already. */
  changed: boolean;
  lanes: Array<{ layer: string; name: string; roles: string[] }>;
}

export function reloadConfig(project: Project): ConfigReload {
  let text: string;
  try {
    text = readFileSync(project.configPath, "utf8");
  } catch (err) {
    throw new UnavailableError(
      "config_unreadable",
      `cannot read ${project.configPath} (${(err as NodeJS.ErrnoException).code ?? "error"}): the config in use is unchanged`,
    );
  }
  let next: Config;
  try {
    next = parseConfig(text, project.configPath);
  } catch (err) {
    if (!isPmagentError(err)) throw err;
    // parseConfig raises usage errors only.
    throw new UsageError(
      err.code as CodeOf<"usage">,
      `${err.message}\nThe config in use is unchanged: fix the file and reload again.`,
    );
  }
  const fixed = AT_START.filter((k) => canonicalJson(next[k]) !== canonicalJson(project.config[k]));
  if (fixed.length > 0) {
    throw new ConflictError(
      "config_needs_restart",
      `${project.configPath} changes ${fixed.join(", ")}, which pmagent serve reads only at start: restart it to apply them (the config in use is unchanged)`,
      { fields: fixed },
    );
  }
  const changed = canonicalJson(next) !== canonicalJson(project.config);
  if (changed) project.config = next;
  return {
    config_path: project.configPath,
    changed,
    lanes: next.lanes.map((l) => ({ layer: l.layer, name: l.name, roles: l.roles.map((r) => r.name) })),
  };
}
