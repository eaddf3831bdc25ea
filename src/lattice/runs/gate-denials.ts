import type { Store } from "../../store/index.js";
import { iso } from "./rows.js";

/** A DENY of the OA run gate that still stands: the entry was not run since, nor decided otherwise. */
export interface GateDenial {
  entry_id: string;
  entry_version: number;
  role: string;
  reasoning: string;
  conditions: string[];
  at: string;
}

interface DenialRow {
  entry_id: string;
  entry_version: number | string;
  role: string;
  reasoning: string;
  conditions_json: string;
  at_ms: number | string;
}

/**
 * The entries whose latest gate decision is a DENY, newest first: what a person may need to look
 * at (the kernel refuses to let the entry run). One row per entry.
 */
export async function standingGateDenials(store: Store, projectId: string, limit = 50): Promise<GateDenial[]> {
  const rows = await store.all<DenialRow>(
    `SELECT d.entry_id, d.entry_version, d.role, d.reasoning, d.conditions_json, d.at_ms FROM lattice_gate_decisions d
     WHERE d.project_id = ? AND d.decision = 'DENY'
       AND d.id = (SELECT MAX(l.id) FROM lattice_gate_decisions l WHERE l.project_id = d.project_id AND l.entry_id = d.entry_id)
     ORDER BY d.id DESC LIMIT ?`,
    [projectId, limit],
  );
  return rows.map((r) => ({
    entry_id: r.entry_id,
    entry_version: Number(r.entry_version),
    role: r.role,
    reasoning: r.reasoning,
    conditions: JSON.parse(r.conditions_json) as string[],
    at: iso(Number(r.at_ms))!,
  }));
}
