// A config the schema has accepted, remembered beside the store (.pmagent/config.validated.json)
// with the text it came from: a command that finds the same text, checked by the same build,
// takes the config from there and does not load zod and the schema (about as long as node takes
// to start). Any difference, or a file that cannot be read, goes through the schema again.
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../core/index.js";
import { readConfigText, type Project } from "./project.js";
import type { Config } from "./schema.js";

const STORE_DIR = ".pmagent";
const VALIDATED_FILE = "config.validated.json";

interface Validated {
  stamp: string;
  configPath: string;
  text: string;
  config: Config;
}

/**
 * What the schema's verdict depends on besides the text: this build's files holding the config's
 * code (a rebuild or an upgrade rewrites them), config/validated, schema and load. They are found
 * from this module as tsc wrote it (dist/config/) and as bundled into the CLI's chunks (dist/bin/,
 * at the same depth), so the CLI and the library of one build take each other's remembered config.
 * Undefined when they cannot be found: nothing is remembered.
 */
function buildStamp(): string | undefined {
  const ext = import.meta.url.slice(import.meta.url.lastIndexOf("."));
  const parts: string[] = [];
  for (const name of ["validated", "schema", "load"]) {
    const st = statSync(new URL(`../config/${name}${ext}`, import.meta.url), { throwIfNoEntry: false });
    if (!st) return undefined;
    parts.push(`${name}${ext}:${st.mtimeMs}:${st.size}`);
  }
  return parts.join(" ");
}

function remembered(path: string): Partial<Validated> | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Partial<Validated>;
  } catch {
    return undefined;
  }
}

/**
 * The project a command runs in, as `loadProject` gives it (the same errors for a missing,
 * unreadable or invalid config), validated by the schema only when the text or the build changed
 * since the last time. Remembered only where the store's directory (.pmagent/) already exists.
 */
export async function openConfig(options: { cwd?: string; configPath?: string } = {}): Promise<Project> {
  const { configPath, text } = readConfigText(options);
  const root = dirname(configPath);
  const path = join(root, STORE_DIR, VALIDATED_FILE);
  const stamp = buildStamp();
  const known = stamp === undefined ? undefined : remembered(path);
  if (known && known.stamp === stamp && known.configPath === configPath && known.text === text && known.config) {
    return { root, configPath, config: known.config };
  }
  const { parseConfig } = await import("./load.js");
  const config = parseConfig(text, configPath);
  if (stamp !== undefined && statSync(join(root, STORE_DIR), { throwIfNoEntry: false })?.isDirectory()) {
    try {
      writeFileAtomic(path, JSON.stringify({ stamp, configPath, text, config } satisfies Validated));
    } catch {
      // Only a shortcut: a directory that cannot be written to means validating next time too.
    }
  }
  return { root, configPath, config };
}
