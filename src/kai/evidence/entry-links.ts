import type { BoardEntryEvidence } from "./types.js";

/**
 * What an entry says about where its work is, wherever its writer put it: the workflow run (the
 * entry's `source_run_id`, `refs.actions_run_id`/`workflow_run_id`/`<x>_workflow_run_id`/`run_id`,
 * a `payload_ref` naming an Actions artifact), the workflow's name, the artifact (refs, the
 * `payload.details.<x>_path` the origin's roles write, a `payload_ref` path or artifact name), the
 * pull request and the cycle it names.
 */
export interface EntryLinks {
  run_id: string | null;
  workflow: string | null;
  artifact_path: string | null;
  pr_number: number | null;
  cycle: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | null =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" && Number.isFinite(v) ? String(v) : null;
const first = (...values: unknown[]): string | null => values.map(str).find((v) => v !== null) ?? null;

/** The values of keys ending in `suffix` (`proposal_workflow_run_id`), in the object's order. */
const bySuffix = (o: Record<string, unknown>, suffix: string): unknown[] =>
  Object.entries(o)
    .filter(([k]) => k.endsWith(suffix))
    .map(([, v]) => v);

function prNumber(v: unknown): number | null {
  if (typeof v === "number" && Number.isInteger(v) && v > 0) return v;
  const s = str(v);
  const m = s === null ? null : (/\/pull\/(\d+)\b/.exec(s) ?? /^#?(\d+)$/.exec(s));
  return m ? Number(m[1]) : null;
}

function cycleName(v: unknown): string | null {
  if (typeof v === "number" && Number.isInteger(v) && v > 0) return `cycle-${v}`;
  const s = str(v);
  if (s === null) return null;
  const m = /\bcycle[-_ ]?(\d+)\b/i.exec(s) ?? /^(\d+)$/.exec(s);
  return m ? `cycle-${Number(m[1])}` : null;
}

export function entryLinks(entry: BoardEntryEvidence): EntryLinks {
  const refs = entry.refs;
  const details = entry.details ?? {};
  const ref = isObject(entry.payload_ref) ? entry.payload_ref : {};
  const artifactRef =
    ref.type === "actions_artifact" || ref.artifact_name !== undefined || ref.workflow_run_id !== undefined;
  const listed = Array.isArray(refs.artifacts) ? refs.artifacts : [];
  const detailPaths = bySuffix(details, "_path").filter((p) => typeof p === "string" && p.endsWith(".json"));
  return {
    run_id: first(
      entry.source_run_id,
      refs.actions_run_id,
      refs.workflow_run_id,
      ...bySuffix(refs, "_workflow_run_id"),
      ref.workflow_run_id,
      refs.run_id,
    ),
    workflow: first(refs.actions_workflow, refs.workflow, refs.workflow_name, ref.workflow, ref.workflow_name),
    artifact_path: first(
      refs.artifact_path,
      refs.artifact,
      ...listed,
      ...detailPaths,
      artifactRef ? null : (ref.value ?? ref.path),
      ref.artifact_name,
      ...bySuffix(refs, "_artifact_name"),
    ),
    pr_number: [refs.pr_number, refs.pr, refs.pull_request, refs.pr_url].map(prNumber).find((n) => n !== null) ?? null,
    cycle: [refs.cycle, refs.cycle_id, details.cycle, details.cycle_id].map(cycleName).find((c) => c !== null) ?? null,
  };
}
