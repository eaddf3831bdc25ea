// SQL conditions on the board's table that other modules embed in their own queries (the runs'
// fencing), so that only the blackboard names bb_entries' columns. Nothing else is loaded with
// it: `pmagent runs list` reads runs without loading the board.

/**
 * SQL condition on the caller's row (its columns given as SQL expressions): the entry is claimed by
 * a worker other than `worker`.
 */
export function claimedByAnother(columns: { projectId: string; entryId: string; worker: string }): string {
  return `EXISTS (SELECT 1 FROM bb_entries b WHERE b.project_id = ${columns.projectId} AND b.id = ${columns.entryId} AND b.claimed_by IS NOT NULL AND b.claimed_by <> ${columns.worker})`;
}
