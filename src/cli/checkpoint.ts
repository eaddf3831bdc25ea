import type { Command } from "./commander.js";
import {
  createCheckpoint,
  defaultCheckpointDir,
  DEFAULT_WORKSPACE,
  listCheckpoints,
  pruneCheckpoints,
  restoreCheckpoint,
} from "../lattice/sprite/index.js";
import { plural } from "../core/index.js";
import { formatOption, intOption, print, type Format } from "./output.js";

interface Where {
  workspace?: string;
  dir?: string;
  format: Format;
}

function resolveWhere(opts: Where): { workspace: string; dir: string } {
  const workspace = opts.workspace ?? (process.env.LATTICE_WORKSPACE || DEFAULT_WORKSPACE);
  return { workspace, dir: opts.dir ?? defaultCheckpointDir(workspace) };
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function registerCheckpoint(program: Command): void {
  const group = program
    .command("checkpoint")
    .description(
      "content-addressed snapshots of a sprite's workspace (without .lattice/). Workspace: --workspace, else $LATTICE_WORKSPACE, else /workspace; checkpoints: --dir, else $LATTICE_CHECKPOINT_DIR, else <workspace parent>/.lattice-checkpoints/<workspace name>",
    );
  const where = (cmd: Command) =>
    cmd
      .option("--workspace <dir>", "the workspace (default: $LATTICE_WORKSPACE or /workspace)")
      .option("--dir <dir>", "the checkpoint directory (default: $LATTICE_CHECKPOINT_DIR or beside the workspace)")
      .addOption(formatOption());

  where(group.command("create").description("snapshot the workspace and print the new checkpoint id")).action(
    (opts: Where) => {
      const { workspace, dir } = resolveWhere(opts);
      const result = createCheckpoint(workspace, dir);
      print(opts.format, result, () => result.id);
    },
  );

  where(group.command("list").description("list checkpoints, oldest first: id, created_at, files, bytes")).action(
    (opts: Where) => {
      const { dir } = resolveWhere(opts);
      const list = listCheckpoints(dir);
      print(opts.format, list, () =>
        list.length === 0
          ? `no checkpoints in ${dir}`
          : list.map((c) => `${c.id}  ${c.created_at}  ${plural(c.files, "file")}  ${mb(c.bytes)}`).join("\n"),
      );
    },
  );

  where(
    group.command("restore").description("make the workspace exactly what checkpoint ID recorded (.lattice/ is kept)"),
  )
    .argument("<id>", "checkpoint id (chk_…)")
    .action((id: string, opts: Where) => {
      const { workspace, dir } = resolveWhere(opts);
      const result = restoreCheckpoint(workspace, dir, id);
      print(
        opts.format,
        result,
        () => `restored ${id}: ${result.written} written, ${result.removed} removed, ${result.unchanged} unchanged`,
      );
    });

  where(
    group
      .command("prune")
      .description("keep the newest N checkpoints; delete the others and the content only they used"),
  )
    .requiredOption("--keep <n>", "how many of the newest checkpoints to keep", intOption("--keep", 0))
    .action((opts: Where & { keep: number }) => {
      const { dir } = resolveWhere(opts);
      const result = pruneCheckpoints(dir, opts.keep);
      print(
        opts.format,
        result,
        () =>
          `removed ${plural(result.removed_checkpoints.length, "checkpoint")} and ${plural(result.removed_blobs, "blob")} (${mb(result.freed_bytes)}); kept ${result.kept}`,
      );
    });
}
