/**
 * Walking a workspace for a checkpoint: directories, regular files and symlinks (never followed),
 * in a stable order with parents before children. `.lattice/` at the top is the sprite ↔
 * supervisor channel, not work, and the checkpoint directory itself (when it sits inside the
 * workspace) would snapshot itself: both are left out. Sockets, FIFOs and devices are skipped.
 */
import { lstatSync, readdirSync, realpathSync, type Stats } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { NotFoundError, UsageError } from "../../core/index.js";
import { LATTICE_DIR } from "../protocol/index.js";

export interface WalkedNode {
  path: string;
  abs: string;
  type: "dir" | "file" | "symlink";
  stat: Stats;
}

/** Relative paths (`/`-separated) the walk never enters or reports. */
export function excludedPaths(workspace: string, checkpointDir: string): Set<string> {
  const excluded = new Set([LATTICE_DIR]);
  const rel = relative(resolve(workspace), resolve(checkpointDir));
  if (rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep)) excluded.add(rel.split(sep).join("/"));
  return excluded;
}

export function walkWorkspace(workspace: string, excluded: Set<string>): WalkedNode[] {
  const out: WalkedNode[] = [];
  const visit = (absDir: string, relDir: string) => {
    let names: string[];
    try {
      names = readdirSync(absDir).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && relDir !== "") return; // removed while we walked
      throw err;
    }
    for (const name of names) {
      const path = relDir === "" ? name : `${relDir}/${name}`;
      if (excluded.has(path)) continue;
      const abs = join(absDir, name);
      let stat: Stats;
      try {
        stat = lstatSync(abs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // deleted while we walked
        throw err;
      }
      if (stat.isDirectory()) {
        out.push({ path, abs, type: "dir", stat });
        visit(abs, path);
      } else if (stat.isFile()) out.push({ path, abs, type: "file", stat });
      else if (stat.isSymbolicLink()) out.push({ path, abs, type: "symlink", stat });
    }
  };
  visit(workspace, "");
  return out;
}

/** The real path of a workspace, which must be a directory. */
export function workspaceRoot(workspace: string): string {
  try {
    const real = realpathSync(workspace);
    if (!lstatSync(real).isDirectory())
      throw new UsageError("workspace_not_directory", `workspace ${workspace} is not a directory`);
    return real;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new NotFoundError(
        "workspace_missing",
        `workspace ${workspace} does not exist (set LATTICE_WORKSPACE or pass --workspace)`,
      );
    }
    throw err;
  }
}
