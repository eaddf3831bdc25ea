import type { Migration } from "../../store/index.js";
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
import { m0420 } from "./0420_bb_entry_state.js";

/** The blackboard's tables (entries, history, sync state) and their functions, in order (one file per migration beside this one; ids and order as they always were). */
export const blackboardMigrations: readonly Migration[] = [
  m0001,
  m0002,
  m0020,
  m0021,
  m0030,
  m0031,
  m0040,
  m0050,
  m0060,
  m0070,
  m0080,
  m0420,
];
