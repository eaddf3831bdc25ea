import { claimedByAnother } from "../../blackboard/sql/index.js";

/**
 * SQL condition on a `lattice_runs` row (unaliased): the run is not fenced. A worker's run is
 * fenced once another worker took its entry over: the other worker holds the entry's claim, or
 * has started a newer run of the entry (the claim is gone once that run finished the entry). The
 * claim and the run's generation are the fencing tokens; a `pmagent run` without a worker is never fenced.
 */
export const RUN_NOT_FENCED = `NOT ${claimedByAnother({ projectId: "lattice_runs.project_id", entryId: "lattice_runs.entry_id", worker: "lattice_runs.worker" })}
  AND NOT EXISTS (SELECT 1 FROM lattice_runs n WHERE n.project_id = lattice_runs.project_id AND n.entry_id = lattice_runs.entry_id AND n.created_ms >= lattice_runs.created_ms AND n.id <> lattice_runs.id AND n.worker <> lattice_runs.worker)`;
