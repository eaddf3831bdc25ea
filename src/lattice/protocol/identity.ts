/**
 * The identity an event claims (its `sprite_id` and `work_item_id`) against the run's: an event
 * claiming another is still stored (it came from this run's sprite), with a protocol warning
 * naming both values, once per value that differs.
 */

/** The run's own identity, as the sprite got it (LATTICE_SPRITE_ID, LATTICE_WORK_ITEM_ID). */
export interface EventIdentity {
  sprite_id: string;
  work_item_id: string;
}

/** The warnings for an event's identity fields that differ from the run's (none when they match). */
export function identityWarnings(
  event: { sprite_id?: unknown; work_item_id?: unknown },
  run: EventIdentity,
): Array<{ key: string; reason: string }> {
  const out: Array<{ key: string; reason: string }> = [];
  for (const field of ["sprite_id", "work_item_id"] as const) {
    const claimed = event[field];
    if (claimed === run[field]) continue;
    const shown = JSON.stringify(claimed);
    out.push({
      key: `${field}\0${shown}`,
      reason: `event ${field} ${shown} differs from the run's ${field} ${JSON.stringify(run[field])} (LATTICE_${field.toUpperCase()}); the event is stored under this run`,
    });
  }
  return out;
}

/** Keeps one warning per differing value: a sprite that gets its id wrong on every event is told once. */
export class IdentityWarnings {
  private readonly seen = new Set<string>();
  constructor(private readonly run: EventIdentity) {}

  /** The warnings for this event not given before. */
  check(event: { sprite_id?: unknown; work_item_id?: unknown }): string[] {
    if (event.sprite_id === this.run.sprite_id && event.work_item_id === this.run.work_item_id) return [];
    const fresh: string[] = [];
    for (const w of identityWarnings(event, this.run)) {
      if (this.seen.has(w.key)) continue;
      this.seen.add(w.key);
      fresh.push(w.reason);
    }
    return fresh;
  }
}
