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

export const LEDGER_TAG = "ledger";

/** The ledger block appended to the developer instructions. */
export function renderLedgerBlock(ledger: Ledger): string {
  const refs = ledger.refs.length === 0 ? ["refs: none"] : ["refs:", ...ledger.refs.map((r) => `- ${r}`)];
  return [
    `<${LEDGER_TAG}>`,
    `entry_id: ${ledger.entry_id}`,
    `lane: ${ledger.lane}`,
    `role: ${ledger.role}`,
    `cycle: ${ledger.cycle}`,
    ...refs,
    `</${LEDGER_TAG}>`,
  ].join("\n");
}
