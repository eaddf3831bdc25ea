/**
 * Reconciling the two copies of a sprite's events. Every event arrives on stdout and in the
 * outbox; either may miss some (a broken pipe, a crash before the append). The merged log holds
 * each event once (by `id`, the hash of its canonical JSON), in outbox order where the outbox has
 * it; an event only stdout saw is placed after the event stdout showed before it.
 */
export function mergeEventStreams<T extends { id: string }>(outbox: readonly T[], stdout: readonly T[]): T[] {
  const inOutbox = new Set<string>();
  const base: T[] = [];
  for (const e of outbox) {
    if (inOutbox.has(e.id)) continue;
    inOutbox.add(e.id);
    base.push(e);
  }
  // stdout-only events, grouped by the last event before them that the outbox also has.
  const after = new Map<string | null, T[]>();
  const placed = new Set<string>();
  let anchor: string | null = null;
  for (const e of stdout) {
    if (inOutbox.has(e.id)) {
      anchor = e.id;
      continue;
    }
    if (placed.has(e.id)) continue;
    placed.add(e.id);
    const list = after.get(anchor) ?? [];
    list.push(e);
    after.set(anchor, list);
  }
  const out: T[] = [...(after.get(null) ?? [])];
  for (const e of base) out.push(e, ...(after.get(e.id) ?? []));
  return out;
}
