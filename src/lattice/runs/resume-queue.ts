/** The resume queue's rows (lattice_resume_queue): resumes recorded for any worker of the run's role to carry out. */
import type { Queryable } from "../../store/index.js";

export interface QueuedResume {
  run_id: string;
  role: string;
  inputs: Record<string, unknown>;
  context: Record<string, unknown>;
  queued_ms: number;
}

interface QueueRow {
  run_id: string;
  role: string;
  inputs_json: string;
  context_json: string;
  queued_ms: number | string;
}

const COLUMNS = "run_id, role, inputs_json, context_json, queued_ms";

function fromRow(r: QueueRow): QueuedResume {
  return {
    run_id: r.run_id,
    role: r.role,
    inputs: JSON.parse(r.inputs_json),
    context: JSON.parse(r.context_json),
    queued_ms: Number(r.queued_ms),
  };
}

/** Queue a resume; false when one is queued for the run already. */
export async function queueResume(q: Queryable, projectId: string, r: QueuedResume): Promise<boolean> {
  const done = await q.run(
    `INSERT INTO lattice_resume_queue (run_id, project_id, role, inputs_json, context_json, queued_ms) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
    [r.run_id, projectId, r.role, JSON.stringify(r.inputs), JSON.stringify(r.context), r.queued_ms],
  );
  return done.changes === 1;
}

/** The oldest queued resumes of `roles`. */
export async function queuedResumes(
  q: Queryable,
  projectId: string,
  roles: readonly string[],
  limit: number,
): Promise<QueuedResume[]> {
  if (roles.length === 0) return [];
  const rows = await q.all<QueueRow>(
    `SELECT ${COLUMNS} FROM lattice_resume_queue WHERE project_id = ? AND role IN (${roles.map(() => "?").join(", ")}) ORDER BY queued_ms, run_id LIMIT ${Math.max(1, Math.floor(limit))}`,
    [projectId, ...roles],
  );
  return rows.map(fromRow);
}

export async function queuedResume(q: Queryable, projectId: string, runId: string): Promise<QueuedResume | undefined> {
  const row = await q.get<QueueRow>(`SELECT ${COLUMNS} FROM lattice_resume_queue WHERE project_id = ? AND run_id = ?`, [
    projectId,
    runId,
  ]);
  return row && fromRow(row);
}

/** Remove the run's queued resume (taken, or the run no longer waits); true when there was one. */
export async function dropQueuedResume(q: Queryable, projectId: string, runId: string): Promise<boolean> {
  return (
    (await q.run(`DELETE FROM lattice_resume_queue WHERE project_id = ? AND run_id = ?`, [projectId, runId]))
      .changes === 1
  );
}
