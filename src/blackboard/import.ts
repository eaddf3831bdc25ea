import { RefusedError, UsageError, contentHash, parseWith } from "../core/index.js";
import type { BoardContext } from "./context.js";
import { recordHistory } from "./history.js";
import { assertNotInProgress, insertEntry } from "./post.js";
import { checkVersion, readRow, sameOrRefuse, toStored, writeRow } from "./rows.js";
import { EntrySchema, type Entry, type StoredEntry } from "./schema.js";
import { withCompatDefaults } from "./shapes.js";

export type PutOutcome = "created" | "unchanged" | "replaced";

/**
 * Import an entry as it was (status and timestamps kept), under the rules `post` applies: only
 * a human imports an entry written by someone else, and no entry arrives in_progress.
 */
export async function importEntry(
  ctx: BoardContext,
  actor: string,
  input: unknown,
  options: { source?: string } = {},
): Promise<{ stored: StoredEntry; outcome: PutOutcome }> {
  const source = options.source ?? "entry";
  const entry = parseWith(EntrySchema, withCompatDefaults(input), source, "invalid_entry");
  if (entry.from !== actor && !ctx.humans.includes(actor)) {
    throw new RefusedError(
      "permission_refused",
      `${actor} may not import entry ${entry.id} written by ${entry.from}: only a human (${ctx.humans.join(", ") || "none configured"}) imports others' entries as they were`,
      { actor, from: entry.from },
    );
  }
  assertNotInProgress(entry.status, entry.id, "imported");
  return putEntry(ctx, actor, entry, { source });
}

/**
 * Store an entry exactly as given (status and timestamps kept): for imports and board syncs.
 * Same id and content: a no-op; same id, other content: refused unless `replace`.
 */
export async function putEntry(
  ctx: BoardContext,
  actor: string,
  input: unknown,
  options: { source?: string; replace?: boolean; expectedVersion?: number } = {},
): Promise<{ stored: StoredEntry; outcome: PutOutcome }> {
  const source = options.source ?? "entry";
  const entry = parseWith(EntrySchema, withCompatDefaults(input), source, "invalid_entry");
  if (entry.project_id !== ctx.projectId) {
    throw new UsageError(
      "wrong_project",
      `${source}: project_id "${entry.project_id}" is not this project's ("${ctx.projectId}")`,
    );
  }
  const now = ctx.now();
  return ctx.store.transaction(async (q) => {
    const existing = await readRow(ctx, q, entry.id, true);
    if (!existing) {
      await insertEntry(ctx, q, entry, { actor, action: "import", at: now });
      return { stored: { entry, version: 1, claimed_by: null, lease_expires_at: null }, outcome: "created" as const };
    }
    // Board sync replaces only the version it compared against (a stale import is refused).
    checkVersion(existing, options.expectedVersion);
    const current = toStored(existing);
    if (contentHash(current.entry) === contentHash(entry)) return { stored: current, outcome: "unchanged" as const };
    if (!options.replace) return { stored: sameOrRefuse(existing, entry), outcome: "unchanged" as const };
    const written = await writeRow(ctx, q, existing, entry, { claimed_by: null, lease_expires_ms: null });
    const changes: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(current.entry), ...Object.keys(entry)]) as Set<keyof Entry>) {
      if (contentHash(current.entry[key] ?? null) !== contentHash(entry[key] ?? null))
        changes[key] = { from: current.entry[key] ?? null, to: entry[key] ?? null };
    }
    await recordHistory(ctx, q, {
      entryId: entry.id,
      version: written.version,
      at: now,
      actor,
      action: "import",
      from: current.entry.status,
      to: entry.status,
      changes,
    });
    return { stored: written, outcome: "replaced" as const };
  });
}
