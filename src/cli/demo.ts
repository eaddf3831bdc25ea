import type { Command } from "commander";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../blackboard/index.js";
import { followUpId, initProject } from "../config/index.js";
import { openStore } from "../store/index.js";
import { entryLine } from "./bb.js";

/**
 * `pmagent demo`: a temporary project on SQLite and one pass of the doc_update lane on the
 * blackboard — each role claims its entry, hands over to the next role, and marks it done.
 */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("run the doc_update lane once on the blackboard of a temporary project (SQLite, no keys) and print what happened")
    .option("--dir <dir>", "where to create the demo project (default: a new temporary directory)")
    .action(async (opts: { dir?: string }) => {
      const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "pmagent-demo-"));
      const project = initProject(dir, { projectId: "demo", force: true });
      const store = await openStore({ root: project.root, storage: project.config.storage, env: {} });
      const out = (line = "") => process.stdout.write(`${line}\n`);
      try {
        const board = new Blackboard(store, { projectId: project.config.project_id, humans: project.config.humans });
        const lane = project.config.lanes[0]!;
        out(`pmagent demo — project "${project.config.project_id}" in ${project.root}`);
        out(`store: ${store.location}`);
        out(`lane ${lane.layer}/${lane.name}: Human → ${lane.roles.map((r) => r.name).join(" → ")}`);
        out();
        const root = await board.post("Human", {
          id: "demo-docupdate-1",
          to: lane.roles[0]!.name,
          kind: lane.roles[0]!.allowed_kinds[0]!,
          payload: { summary: "Refresh the Layer B section of the STATE document", details: {}, refs: {} },
          target_docs: [lane.state_file],
        });
        out(`Human posts      ${entryLine(root.stored)}`);
        let id = root.stored.entry.id;
        for (const role of lane.roles) {
          const worker = `${role.name}@demo`;
          const claimed = await board.claim(worker, role.name, role.allowed_kinds);
          if (!claimed || claimed.entry.id !== id) throw new Error(`demo: ${role.name} did not find ${id}`);
          out(`${role.name.padEnd(6)} claims    ${entryLine(claimed)}`);
          if (role.next) {
            const next = await board.post(role.name, {
              id: followUpId(lane, id, role.next.id_suffix),
              to: role.next.to,
              kind: role.next.kind,
              payload: { summary: `${role.name} hands over to ${role.next.to}`, details: {}, refs: { previous_entry: id } },
              target_docs: claimed.entry.target_docs,
            });
            out(`${role.name.padEnd(6)} posts     ${entryLine(next.stored)}`);
            await board.transition(role.name, id, "done", { worker });
            out(`${role.name.padEnd(6)} finishes  ${id} → done`);
            id = next.stored.entry.id;
          } else {
            await board.transition(role.name, id, "done", { worker });
            out(`${role.name.padEnd(6)} finishes  ${id} → done (end of the lane)`);
          }
        }
        out();
        out("history:");
        for (const h of await board.history()) out(`  ${h.at}  ${h.entry_id.padEnd(30)} ${h.actor.padEnd(6)} ${h.action.padEnd(8)} ${h.from_status ?? "∅"} → ${h.to_status}`);
        out();
        const entries = await board.list();
        out(`${entries.length} entries, ${entries.filter((e) => e.entry.status === "done").length} done. Look around: npx pmagent --config ${project.configPath} bb list`);
      } finally {
        await store.close();
      }
    });
}
