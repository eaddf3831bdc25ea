/**
 * A flush's usage reports, added to the run's usage rows in the transaction that stores them:
 * only events stored for the first time are counted, so a re-read after a crash or an event's
 * stdout copy never counts twice, and a rolled-back flush counts nothing.
 */
import type { Queryable } from "../../store/index.js";
import { addTokens, noTokens, usageOfEvent, type TokenCounts } from "./usage.js";
import { text, type NewEvent } from "./event-insert.js";

/** Bytes every usage report holds (`"kind":"token_usage"` or `"kind":"usage"`): other INFO events are not parsed. */
const NEEDLE = Buffer.from('usage"');

export class UsageTally {
  private readonly byModel = new Map<string, TokenCounts & { reports: number }>();

  get any(): boolean {
    return this.byModel.size > 0;
  }

  /** Count a newly stored event if it is a usage report. */
  add(c: NewEvent): void {
    if (c.type !== "INFO") return;
    if (typeof c.json === "string" ? !c.json.includes('usage"') : c.json.indexOf(NEEDLE) < 0) return;
    let usage;
    try {
      usage = usageOfEvent("INFO", (JSON.parse(text(c.json)) as { payload?: unknown }).payload);
    } catch {
      return; // stored events are valid JSON; nothing to count otherwise
    }
    if (usage === null) return;
    let row = this.byModel.get(usage.model);
    if (!row) this.byModel.set(usage.model, (row = { ...noTokens(), reports: 0 }));
    addTokens(row, usage.tokens);
    row.reports++;
  }

  /** Add the counted reports to the run's rows (in the flush's transaction). */
  async store(q: Queryable, runId: string): Promise<void> {
    for (const [model, t] of this.byModel) {
      await q.run(
        `INSERT INTO lattice_run_usage (run_id, model, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, total_tokens, reports) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, model) DO UPDATE SET input_tokens = lattice_run_usage.input_tokens + excluded.input_tokens,
           cached_input_tokens = lattice_run_usage.cached_input_tokens + excluded.cached_input_tokens, output_tokens = lattice_run_usage.output_tokens + excluded.output_tokens,
           reasoning_tokens = lattice_run_usage.reasoning_tokens + excluded.reasoning_tokens, total_tokens = lattice_run_usage.total_tokens + excluded.total_tokens,
           reports = lattice_run_usage.reports + excluded.reports`,
        [
          runId,
          model,
          t.input_tokens,
          t.cached_input_tokens,
          t.output_tokens,
          t.reasoning_tokens,
          t.total_tokens,
          t.reports,
        ],
      );
    }
  }
}
