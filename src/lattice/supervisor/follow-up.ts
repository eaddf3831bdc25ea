/**
 * What the supervisor writes on the blackboard when a run ends, in the roles contract's shapes
 * (docs/pm/blackboard_roles_contract_v1.md): `payload.refs` is an object keyed as the contract's
 * readers read it (`source_board_id`, the run, the artifacts), and a failed step posts a
 * `doc_update_error` entry to a human with the reason, the run and its evidence (§2.4, §3.4.4).
 */
import type { Entry, EntryInput } from "../../blackboard/index.js";
import type { RunRecord, StoredEvent } from "../runs/index.js";
import { SANDBOX_WORKSPACE } from "../sandbox/index.js";

/** The kind of the entry a failed step posts (roles contract §2.3). */
export const ERROR_KIND = "doc_update_error";
/** Suffix of an error entry's id: the failed entry's id plus this. */
export const ERROR_ID_SUFFIX = "-error";

export interface ArtifactRefItem {
  type: "artifact";
  run_id: string;
  event_id: string;
  kind: string;
  ref: string | null;
  url: string | null;
}

/**
 * The run's ARTIFACT events as references, once each (kind, ref and url): a file under the run's
 * workspace (or /workspace, its sandbox mount) by its repository path, as the next role and a
 * pull request know it.
 */
export function artifactItems(run: RunRecord, events: readonly StoredEvent[]): ArtifactRefItem[] {
  const seen = new Set<string>();
  const items: ArtifactRefItem[] = [];
  for (const e of events) {
    if (e.event_type !== "ARTIFACT") continue;
    const p = e.event.payload as { kind: string; ref?: string | null; url?: string | null };
    const ref = typeof p.ref === "string" ? repositoryPath(p.ref, run.workspace) : null;
    const key = JSON.stringify([p.kind, ref, p.url ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    items.push({ type: "artifact", run_id: run.id, event_id: e.id, kind: p.kind, ref, url: p.url ?? null });
  }
  return items;
}

function repositoryPath(ref: string, workspace: string): string {
  for (const root of [workspace, SANDBOX_WORKSPACE]) if (ref.startsWith(`${root}/`)) return ref.slice(root.length + 1);
  return ref;
}

/**
 * `payload.refs` of a follow-up: the entry it follows (`source_board_id`), the run, each artifact's
 * reference under its kind (the last one of a kind wins), and the artifacts in full (`artifacts`).
 */
export function followUpRefs(
  run: RunRecord,
  entry: Entry,
  artifacts: readonly ArtifactRefItem[],
): Record<string, unknown> {
  const refs: Record<string, unknown> = {
    source_board_id: entry.id,
    run_id: run.id,
    ...(entry.source_run_id !== undefined ? { source_run_id: entry.source_run_id } : {}),
  };
  const reserved = new Set([...Object.keys(refs), "source_run_id", "artifacts"]);
  for (const a of artifacts) if (a.ref !== null && !reserved.has(a.kind)) refs[a.kind] = a.ref;
  // The cycle's branch, the commit the run handed on and the cycle's pull request: where the next role starts.
  const cycle = run.cycle;
  if (cycle && (cycle.commit || cycle.pull_request)) {
    Object.assign(refs, {
      branch: cycle.branch,
      ...(cycle.commit ? { commit: cycle.commit } : {}),
      ...(cycle.pull_request ? { pull_request: String(cycle.pull_request.number) } : {}),
      ...(cycle.merged ? { merged: cycle.merged } : {}),
    });
  }
  return { ...refs, artifacts };
}

/** The `doc_update_error` entry of a failed run of `entry`, to the first configured human. */
export function errorEntry(
  run: RunRecord,
  entry: Entry,
  humans: readonly string[],
  events: readonly StoredEvent[],
): EntryInput {
  const reason = run.reason ?? "unknown";
  const errors = events
    .filter((e) => e.event_type === "ERROR")
    .map((e) => String((e.event.payload as { message?: unknown }).message ?? ""));
  const artifacts = artifactItems(run, events);
  return {
    id: `${entry.id}${ERROR_ID_SUFFIX}`,
    to: humans[0] ?? "Human",
    kind: ERROR_KIND,
    payload: {
      summary: `${run.role} failed on ${entry.id} (${entry.kind}): ${reason}`.slice(0, 500),
      details: {
        reason,
        role: run.role,
        failed_entry_id: entry.id,
        failed_kind: entry.kind,
        run_id: run.id,
        evidence: { errors, artifacts },
      },
      refs: { source_board_id: entry.id, run_id: run.id },
    },
    target_docs: entry.target_docs,
    source_run_id: run.id,
  };
}
