/** A run record for tests that store a run's output without a supervisor (ingest, event streams). */
import type { NewRun } from "../../src/lattice/index.js";

/** A run of Builder in project "demo", no entry, its workspace, checkpoints and run folder all `dir`; `fields` override. */
export function newRun(id: string, dir: string, fields: Partial<NewRun> = {}): NewRun {
  return {
    id,
    project_id: "demo",
    role: "Builder",
    entry_id: null,
    sprite_id: "s",
    work_item_id: "w",
    command: ["x"],
    workspace: dir,
    checkpoint_dir: dir,
    run_dir: dir,
    worker: null,
    host: "h",
    supervisor_pid: 1,
    gate: null,
    ...fields,
  };
}
