import type { Command } from "commander";
import { initProject } from "../config/index.js";
import { openStore } from "../store/index.js";
import { formatOption, print } from "./output.js";

export function registerInit(program: Command): void {
  program
    .command("init")
    .description("write pmagent.config.json (the doc_update lane by default) in the current directory and create the store")
    .option("--project-id <id>", "project id (default: the directory name)")
    .option("--force", "overwrite an existing pmagent.config.json")
    .addOption(formatOption())
    .action(async (opts: { projectId?: string; force?: boolean; format: "json" | "text" }) => {
      const p = initProject(process.cwd(), { projectId: opts.projectId, force: opts.force });
      const store = await openStore({ root: p.root, storage: p.config.storage });
      const location = store.location;
      await store.close();
      print(opts.format, { config: p.configPath, project_id: p.config.project_id, store: location }, () =>
        [`wrote ${p.configPath} (project ${p.config.project_id}, lane ${p.config.lanes.map((l) => `${l.layer}/${l.name}`).join(", ")})`, `store: ${location}`].join("\n"),
      );
    });
}
