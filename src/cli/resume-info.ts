import type { Command } from "./commander.js";
import { DEFAULT_WORKSPACE, readResume } from "../lattice/sprite/index.js";

export function registerResumeInfo(program: Command): void {
  program
    .command("resume-info")
    .description(
      "for sprites: print .lattice/resume.json and whether it is a replay, as JSON {resume, replayed, key}. resume is null when not resumed; replayed is true when this same resume (checkpoint and payload) was already processed — treat it as a no-op",
    )
    .option("--workspace <dir>", "the workspace (default: $LATTICE_WORKSPACE or /workspace)")
    .option("--no-mark", "only look: do not record this resume as processed")
    .action((opts: { workspace?: string; mark: boolean }) => {
      const workspace = opts.workspace ?? (process.env.LATTICE_WORKSPACE || DEFAULT_WORKSPACE);
      process.stdout.write(`${JSON.stringify(readResume(workspace, { mark: opts.mark }), null, 2)}\n`);
    });
}
