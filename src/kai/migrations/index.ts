import type { Migration } from "../../store/index.js";
import { m0400 } from "./0400_kai_addressed_index.js";
import { m0410 } from "./0410_kai_addressed_no_dedup.js";

/** Kai's indexes on the board's entries (the queries are Kai's), in order (one file per migration beside this one; ids and order as they always were). */
export const kaiMigrations: readonly Migration[] = [m0400, m0410];
