import { z } from "zod";

/** Where the agent stands on the blackboard: rendered into its developer instructions. */
export const LedgerSchema = z
  .object({
    entry_id: z.string().min(1),
    /** `layer/name` of the lane, e.g. `layer_b/doc_update`. */
    lane: z.string().min(1),
    /** The lane role the agent runs for (e.g. `Sho`), or the prompt role when the lane has none. */
    role: z.string().min(1),
    /** One pass from a root entry to the end of the lane. */
    cycle: z.number().int().min(1),
    /** Earlier artifacts this step builds on: entry ids, run artifacts, paths, URLs. */
    refs: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type Ledger = z.output<typeof LedgerSchema>;
export type LedgerInput = z.input<typeof LedgerSchema>;

/** What is known of the ledger: a request built outside a lane run may lack the entry, lane or cycle. */
export type KnownLedger = Partial<Ledger> & { role: string };

/** The ledger's section header, as the origin writes it (its tests expect `[context_ledger]`). */
export const LEDGER_SECTION = "[context_ledger]";

/** Stated for a field that is not known, so that the model sees the gap instead of guessing. */
export const LEDGER_NONE = "(none)";

/**
 * The ledger block appended to every role's developer instructions: a `[context_ledger]` section
 * naming the role, one field a line; unknown fields say `(none)`. It is the last section of the
 * developer instructions, so it needs no closing line.
 */
export function renderLedgerBlock(ledger: KnownLedger): string {
  const refs = ledger.refs ?? [];
  return [
    LEDGER_SECTION,
    `entry_id: ${ledger.entry_id ?? LEDGER_NONE}`,
    `lane: ${ledger.lane ?? LEDGER_NONE}`,
    `role: ${ledger.role}`,
    `cycle: ${ledger.cycle ?? LEDGER_NONE}`,
    ...(refs.length === 0 ? ["refs: none"] : ["refs:", ...refs.map((r) => `- ${r}`)]),
  ].join("\n");
}
