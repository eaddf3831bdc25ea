import type { Migration } from "../../store/index.js";
import { m0100 } from "./0100_lattice_runs.js";
import { m0110 } from "./0110_lattice_actions.js";
import { m0120 } from "./0120_lattice_history.js";
import { m0130 } from "./0130_lattice_event_identity.js";
import { m0140 } from "./0140_lattice_event_type_index.js";
import { m0150 } from "./0150_lattice_list_indexes.js";
import { m0160 } from "./0160_lattice_env_changes.js";
import { m0170 } from "./0170_lattice_protocol_warnings.js";
import { m0180 } from "./0180_lattice_run_cycle.js";
import { m0190 } from "./0190_lattice_run_usage.js";
import { m0230 } from "./0230_lattice_shared_checkpoints.js";
import { m0240 } from "./0240_lattice_resume_queue.js";

/** The lattice's tables (runs and their events, logs, usage; actions; the local forge's pull requests; environment proposals and changes), in order (one file per migration beside this one; ids and order as they always were). */
export const latticeMigrations: readonly Migration[] = [
  m0100,
  m0110,
  m0120,
  m0130,
  m0140,
  m0150,
  m0160,
  m0170,
  m0180,
  m0190,
  m0230,
  m0240,
];
