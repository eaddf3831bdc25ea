import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { confinePath, NotFoundError } from "../core/index.js";

/** The built console (dist/console): compiled by tsc, its HTML and CSS copied by scripts/postbuild.mjs. */
export const CONSOLE_DIR = fileURLToPath(new URL("../console/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".map": "application/json",
};

/** One file of the console, confined to its directory; only the types it is built from. */
export async function consoleFile(path: string, dir = CONSOLE_DIR): Promise<{ type: string; body: Buffer }> {
  const type = TYPES[extname(path)];
  if (type === undefined) throw new NotFoundError("not_found", `no console file ${path}`);
  const file = confinePath(dir, path, "console file");
  try {
    return { type, body: await readFile(file) };
  } catch {
    throw new NotFoundError("not_found", `no console file ${path} (was the console built? run npm run build)`);
  }
}
