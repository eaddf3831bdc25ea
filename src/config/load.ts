import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  UnavailableError,
  UsageError,
  parseJsonText,
  parseWith,
  writeFileAtomic,
  ConflictError,
} from "../core/index.js";
import { ConfigSchema, type Config } from "./schema.js";
import { defaultConfig, type LaneTemplate } from "./defaults.js";
import { CONFIG_FILE, readConfigText, type Project } from "./project.js";

/** Parse and validate a config text; errors name the file, the JSON path and what was expected. */
export function parseConfig(text: string, source: string): Config {
  const config = parseWith(ConfigSchema, parseJsonText(text, source, "config_invalid_json"), source, "config_invalid");
  const seen = new Set<string>();
  config.lanes.forEach((lane, i) => {
    const key = `${lane.layer}/${lane.name}`;
    if (seen.has(key))
      throw new UsageError("config_invalid", `${source} is invalid:\n  $.lanes[${i}]: lane ${key} is defined twice`);
    seen.add(key);
    const roles = new Set<string>();
    lane.roles.forEach((role, j) => {
      if (roles.has(role.name))
        throw new UsageError(
          "config_invalid",
          `${source} is invalid:\n  $.lanes[${i}].roles[${j}].name: role ${role.name} is defined twice in lane ${key}`,
        );
      roles.add(role.name);
    });
  });
  return config;
}

export function loadProject(options: { cwd?: string; configPath?: string } = {}): Project {
  const { configPath, text } = readConfigText(options);
  return { root: dirname(configPath), configPath, config: parseConfig(text, configPath) };
}

/** Write the default config into `dir`; refuses to overwrite an existing one unless `force`. */
export function initProject(
  dir: string,
  options: { projectId?: string; force?: boolean; lane?: LaneTemplate } = {},
): Project {
  const configPath = join(resolve(dir), CONFIG_FILE);
  if (existsSync(configPath) && !options.force) {
    throw new ConflictError("config_exists", `${configPath} already exists (use --force to overwrite it)`);
  }
  const projectId =
    options.projectId ??
    (basename(resolve(dir))
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "") ||
      "project");
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
    if (code !== "ENOENT")
      throw new UnavailableError(
        "gitignore_unreadable",
        `cannot read ${path} (${code ?? "error"}): add the line ${GITIGNORE_LINE} to it yourself`,
      );
    writeFileAtomic(path, `${GITIGNORE_LINE}\n`);
    return { path, change: "created" };
  }
  if (text.split(/\r?\n/).some((line) => PMAGENT_DIR_LINE.test(line.trim()))) return { path, change: "unchanged" };
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const sep = text.length === 0 || text.endsWith("\n") ? "" : eol;
  try {
    appendFileSync(path, `${sep}${GITIGNORE_LINE}${eol}`);
  } catch (err) {
    throw new UnavailableError(
      "gitignore_unwritable",
      `cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? "error"}): add the line ${GITIGNORE_LINE} to it yourself`,
    );
  }
  return { path, change: "appended" };
}
