import type { Migration } from "../../store/index.js";

/** PostgreSQL: Kai's index on bb_entries without deduplication, as the blackboard's own (migration 80 says why). */
export const m0410: Migration = {
  version: 410,
  name: "kai addressed index without deduplication (PostgreSQL)",
  up: {
    sqlite: "-- PostgreSQL only",
    postgres: "ALTER INDEX kai_bb_entries_addressed SET (deduplicate_items = off);",
  },
};
