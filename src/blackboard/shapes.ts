/**
 * The entry shapes the origin's implementation notes document besides the spec's ideal form
 * (Blackboard Core Spec v1 §6.1, roles contract §3.2 implementation note): Aya's Human → Aya
 * request carries `payload_ref.value` (the progress summary's path), the origin's Sho and Aya
 * workflows write `payload_ref: {type: "actions_artifact", workflow_run_id, artifact_name}` (a
 * GitHub Actions artifact), and such entries may leave out `payload`, `target_docs` and
 * `updated_at`. They are read with those filled in (an empty payload, no target documents, updated
 * when created); `payload_ref` itself is kept as it came.
 */
export function withCompatDefaults(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const e = value as Record<string, unknown>;
  if (!isPayloadRef(e.payload_ref)) return value;
  return {
    ...e,
    ...(e.payload === undefined ? { payload: {} } : {}),
    ...(e.target_docs === undefined ? { target_docs: [] } : {}),
    ...(e.updated_at === undefined && e.created_at !== undefined ? { updated_at: e.created_at } : {}),
  };
}

function isPayloadRef(v: unknown): boolean {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const ref = v as { value?: unknown; type?: unknown; artifact_name?: unknown };
  return typeof ref.value === "string" || (ref.type === "actions_artifact" && typeof ref.artifact_name === "string");
}
