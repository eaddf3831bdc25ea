import type { Command } from "./commander.js";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { runDemo } from "../lane/index.js";
import { findExecutable } from "../lattice/index.js";
import { intOption } from "./output.js";

/**
 * `pmagent demo`: a fresh git repository with a sample STATE document, one whole doc_update cycle
 * run by a worker with the built-in sprites and the local forge, then Kai's digests.
 */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "run one whole doc_update lane cycle (Human request → Aya → Sho → Tsugu → Gen → Hana → Human) in a fresh temporary repository on SQLite with the local forge, then print Kai's lane status and what changed; the repository is left for you to look at",
    )
    .option("--dir <dir>", "where to create the demo repository (new or empty; default: a new temporary directory)")
    .option(
      "--timeout <s>",
      "give up when the cycle has not finished after S seconds (default 120)",
      intOption("--timeout", 1),
    )
    .action(async (opts: { dir?: string; timeout?: number }) => {
      const dir = opts.dir ? resolve(opts.dir) : join(mkdtempSync(join(tmpdir(), "pmagent-demo-")), "repo");
      await runDemo({
        dir,
        out: (line = "") => process.stdout.write(`${line}\n`),
        invocation: invocation(),
        timeoutMs: opts.timeout === undefined ? undefined : opts.timeout * 1000,
      });
    });
}

/**
 * How the demo's closing hints name pmagent: `pmagent` when that is this CLI on the user's PATH (a
 * global install or `npm link`); otherwise the full `node …/main.js` path, since the hints run in
 * the demo repository, where `npx pmagent` would ask the registry for an unpublished package.
 * `npx` puts the clone's node_modules/.bin on PATH for this process only, so that is not counted.
 */
function invocation(): string {
  const self = realpathSync(process.argv[1]!);
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.endsWith(join("node_modules", ".bin")))
    .join(delimiter);
  const onPath = findExecutable("pmagent", path);
  return onPath !== undefined && realpathSync(onPath) === self ? "pmagent" : `node ${self}`;
}
