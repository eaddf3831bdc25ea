import type { Migration } from "../migrate.js";
import { m0001 } from "./0001_blackboard.js";
import { m0002 } from "./0002_blackboard_claim_columns.js";
import { m0020 } from "./0020_bb_sync.js";
import { m0021 } from "./0021_bb_sync_posting.js";
import { m0030 } from "./0030_bb_outline.js";
import { m0031 } from "./0031_bb_claim_function.js";
import { m0040 } from "./0040_bb_list_indexes.js";
import { m0050 } from "./0050_bb_finish_claim_batch.js";
import { m0060 } from "./0060_bb_status_indexes.js";
import { m0070 } from "./0070_bb_finish_claim_set.js";
import { m0080 } from "./0080_bb_entries_no_dedup.js";
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
import { m0400 } from "./0400_kai_addressed_index.js";
import { m0410 } from "./0410_kai_addressed_no_dedup.js";
import { m0420 } from "./0420_bb_entry_state.js";

/** Every migration pmagent knows, in one list (one file per migration beside this one). */
export const migrations: readonly Migration[] = [m0001, m0002, m0020, m0021, m0030, m0031, m0040, m0050, m0060, m0070, m0080, m0100, m0110, m0120, m0130, m0140, m0150, m0160, m0170, m0180, m0190, m0230, m0400, m0410, m0420];
