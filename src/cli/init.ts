import type { Command } from "./commander.js";
import {
  ignorePmagentDir,
  initProject,
  openConfig,
  GITIGNORE_LINE,
  LANE_TEMPLATES,
  type LaneTemplate,
} from "../config/index.js";
import { PmagentError, UsageError } from "../core/index.js";
import { findSandboxTool, type SandboxMode } from "../lattice/index.js";
import { openProject } from "../app/project/index.js";
import { formatOption, print } from "./output.js";

export function registerInit(program: Command): void {
  program
    .command("init")
    .description(
      "write pmagent.config.json (the doc_update lane by default) in the current directory, create the store and add .pmagent/ to .gitignore",
    )
    .option("--project-id <id>", "project id (default: the directory name)")
    .option(
      "--lane <name>",
      `the lane to start with: ${Object.keys(LANE_TEMPLATES).join(" or ")} (Developer → Reviewer → Developer fixes → merge)`,
      "doc_update",
    )
    .option("--force", "overwrite an existing pmagent.config.json")
    .addOption(formatOption())
    .action(async (opts: { projectId?: string; force?: boolean; lane: string; format: "json" | "text" }) => {
      if (!Object.hasOwn(LANE_TEMPLATES, opts.lane))
        throw new UsageError(
          "unknown_lane",
          `--lane ${opts.lane}: there is no such lane template (expected ${Object.keys(LANE_TEMPLATES).join(" or ")})`,
        );
      const p = initProject(process.cwd(), {
        projectId: opts.projectId,
        force: opts.force,
        lane: opts.lane as LaneTemplate,
      });
      const opened = await openProject({ project: p });
      const location = opened.store.location;
      await opened.close();
      // Remembered as valid beside the store now there is one: the first command after init loads no schema.
      await openConfig({ configPath: p.configPath });
      // The project is set up by now: a .gitignore that cannot be updated is a warning, not a failure.
      let gitignore: ReturnType<typeof ignorePmagentDir> | null = null;
      try {
        gitignore = ignorePmagentDir(p.root);
      } catch (err) {
        if (!(err instanceof PmagentError)) throw err;
        process.stderr.write(`pmagent init: warning: ${err.message}\n`);
      }
      const ignoreText =
        gitignore === null
          ? null
          : gitignore.change === "unchanged"
            ? `${gitignore.path} already has a line about .pmagent: left as it is`
            : `${gitignore.change} ${gitignore.path} (ignores ${GITIGNORE_LINE})`;
      const sandbox = sandboxStatus(p.config.sandbox);
      print(
        opts.format,
        { config: p.configPath, project_id: p.config.project_id, store: location, gitignore, sandbox },
        () =>
          [
            `wrote ${p.configPath} (project ${p.config.project_id}, lane ${p.config.lanes.map((l) => `${l.layer}/${l.name}`).join(", ")})`,
            `store: ${location}`,
            ...(ignoreText ? [ignoreText] : []),
            sandboxLine(sandbox),
          ].join("\n"),
      );
    });
}

/** Whether sprites of this project would run sandboxed here (init only reports it: "required" fails at the first run). */
function sandboxStatus(mode: SandboxMode): { mode: SandboxMode; bwrap: string | null } {
  return { mode, bwrap: mode === "off" ? null : findSandboxTool("auto", process.env.PATH ?? "").bwrap };
}

function sandboxLine(s: { mode: SandboxMode; bwrap: string | null }): string {
  if (s.mode === "off")
    return `sandbox: off: sprites run WITHOUT a sandbox (set "sandbox": "auto" or "required" to run them in bubblewrap)`;
  if (s.bwrap) return `sandbox: ${s.mode}: sprites run in bubblewrap (${s.bwrap})`;
  return `sandbox: ${s.mode}: bubblewrap (bwrap) is not installed here, so sprites would run WITHOUT a sandbox (they could read your files and the supervisor's environment): install it with \`apt-get install bubblewrap\`${s.mode === "auto" ? `, then set "sandbox": "required" to refuse runs without it` : ""}`;
}
