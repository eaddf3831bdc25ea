import type { Command } from "commander";
import { ignorePmagentDir, initProject, GITIGNORE_LINE } from "../config/index.js";
import { PmagentError } from "../core/index.js";
import { findSandboxTool, type SandboxMode } from "../lattice/index.js";
import { openStore } from "../store/index.js";
import { formatOption, print } from "./output.js";

export function registerInit(program: Command): void {
  program
    .command("init")
    .description("write pmagent.config.json (the doc_update lane by default) in the current directory, create the store and add .pmagent/ to .gitignore")
    .option("--project-id <id>", "project id (default: the directory name)")
    .option("--force", "overwrite an existing pmagent.config.json")
    .addOption(formatOption())
    .action(async (opts: { projectId?: string; force?: boolean; format: "json" | "text" }) => {
      const p = initProject(process.cwd(), { projectId: opts.projectId, force: opts.force });
      const store = await openStore({ root: p.root, storage: p.config.storage });
      const location = store.location;
      await store.close();
      // The project is set up by now: a .gitignore that cannot be updated is a warning, not a failure.
      let gitignore: ReturnType<typeof ignorePmagentDir> | null = null;
      try {
        gitignore = ignorePmagentDir(p.root);
      } catch (err) {
        if (!(err instanceof PmagentError)) throw err;
        process.stderr.write(`pmagent init: warning: ${err.message}\n`);
      }
      const ignoreText = gitignore === null ? null : gitignore.change === "unchanged" ? `${gitignore.path} already has a line about .pmagent: left as it is` : `${gitignore.change} ${gitignore.path} (ignores ${GITIGNORE_LINE})`;
      const sandbox = sandboxStatus(p.config.sandbox);
      print(opts.format, { config: p.configPath, project_id: p.config.project_id, store: location, gitignore, sandbox }, () =>
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
  if (s.mode === "off") return `sandbox: off: sprites run WITHOUT a sandbox (set "sandbox": "auto" or "required" to run them in bubblewrap)`;
  if (s.bwrap) return `sandbox: ${s.mode}: sprites run in bubblewrap (${s.bwrap})`;
  return `sandbox: ${s.mode}: bubblewrap (bwrap) is not installed here, so sprites would run WITHOUT a sandbox (they could read your files and the supervisor's environment): install it with \`apt-get install bubblewrap\`${s.mode === "auto" ? `, then set "sandbox": "required" to refuse runs without it` : ""}`;
}
