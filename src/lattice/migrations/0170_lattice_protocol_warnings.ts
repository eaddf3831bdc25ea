import type { Migration } from "../../store/index.js";

/**
 * Protocol warnings beside protocol errors: an event stored as it is but worth telling the
 * sprite's author about (its sprite_id or work_item_id differs from the run's). Rows from before
 * are errors.
 */
const up = `ALTER TABLE lattice_protocol_errors ADD COLUMN severity TEXT NOT NULL DEFAULT 'error';`;

export const m0170: Migration = {
  version: 170,
  name: "lattice protocol warnings (severity of a protocol error row)",
  up: { sqlite: up, postgres: up },
};
