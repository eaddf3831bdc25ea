/**
 * A run resumed on another machine than the one it waited on (issue 33): its record names the
 * first machine's paths, which mean nothing here. The run's places are the same logical ones
 * (its workspace, checkpoint and run directories under the project's `.pmagent/`) beneath this
 * machine's project root; its checkpoint comes from the shared store.
 */
import { lstatSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { PmagentError, writeFileAtomic } from "../../core/index.js";
import type { RunPlace, RunRecord } from "../runs/index.js";
import type { SupervisorContext } from "./context.js";

/** Where `run` lives on this machine, or null when it lives here already. */
export function relocation(ctx: SupervisorContext, run: RunRecord): { place: RunPlace; from: string } | null {
  if (run.host === ctx.host) return null;
  const suffix = join(".pmagent", "checkpoints", run.id);
  if (!run.checkpoint_dir.endsWith(`${sep}${suffix}`)) {
    throw new PmagentError(
      "run_not_movable",
      `run ${run.id} keeps its checkpoints in ${run.checkpoint_dir}, not in its project's .pmagent: it can only be resumed on ${run.host}`,
    );
  }
  const from = run.checkpoint_dir.slice(0, -suffix.length - 1);
  const workspace = relative(from, run.workspace);
  if (workspace.startsWith("..") || isAbsolute(workspace)) {
    throw new PmagentError(
      "run_not_movable",
      `run ${run.id} works in ${run.workspace}, outside its project on ${run.host}: it can only be resumed there`,
    );
  }
  const root = ctx.options.project.root;
  return {
    from,
    place: {
      host: ctx.host,
      workspace: join(root, workspace),
      checkpoint_dir: join(root, suffix),
      run_dir: join(root, ".pmagent", "runs", run.id),
    },
  };
}

/**
 * After a restore on this machine: a workspace cloned with `--shared` borrows the objects of its
 * project's repository, named by the first machine's path. Pointed at this machine's project
 * instead (the same repository, or a clone of it). Only the exact line `git clone --shared` wrote
 * is rewritten, and only through real directories (the workspace is the sprite's).
 */
export function reborrowObjects(workspace: string, fromRoot: string, toRoot: string): void {
  const dirs = [".git", ".git/objects", ".git/objects/info"];
  for (const d of dirs) {
    let st;
    try {
      st = lstatSync(join(workspace, d));
    } catch {
      return;
    }
    if (!st.isDirectory()) return;
  }
  const file = join(workspace, ".git/objects/info/alternates");
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return;
  }
  if (!st.isFile() || st.size > 4096) return;
  const before = join(fromRoot, ".git", "objects");
  if (readFileSync(file, "utf8").trim() !== before) return;
  writeFileAtomic(file, `${join(toRoot, ".git", "objects")}\n`);
}
