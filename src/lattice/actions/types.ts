import type { PmagentError } from "../../core/index.js";

/** `unknown`: an attempt was cut off mid-delivery and the target cannot say whether it happened. */
export const ACTION_STATES = ["pending", "running", "succeeded", "failed", "unknown"] as const;
export type ActionState = (typeof ACTION_STATES)[number];

/** One ACTION_REQUEST as the supervisor hands it over (after the event was stored). */
export interface ActionRequest {
  projectId: string;
  runId: string;
  /** Identity of the ACTION_REQUEST event (hash of its canonical JSON). */
  eventHash: string;
  role: string;
  workItemId: string;
  /** The run's workspace (a git repository): where OPEN_PR pushes from. */
  workspace: string;
  action: string;
  parameters: Record<string, unknown>;
  blocking: boolean;
}

/** What a handler produces: `inputs` resume a blocked sprite; `stored` is what the database keeps. */
export interface ActionOutcome {
  /** Result recorded in the action row (never a secret). */
  stored: Record<string, unknown>;
  /** Inputs for a blocked sprite (defaults to `stored`). */
  inputs?: Record<string, unknown>;
  /** Inputs that go into resume.json only, never the database or logs. */
  secretInputs?: Record<string, string>;
}

export interface ActionContext {
  request: ActionRequest;
  /** run id + event hash: the handler tags external side effects with it where it can. */
  idempotencyKey: string;
  /** 1 on the first attempt. */
  attempt: number;
  /** True when an earlier attempt was cut off mid-way (a crash): the side effect may have happened. */
  interrupted: boolean;
}

export interface ActionHandler {
  /**
   * "probe": the handler looks for its own earlier side effect before acting, so running it again
   * after an interruption cannot do the side effect twice. "keyed": the target drops a repeated
   * delivery by its idempotency key (a webhook's Idempotency-Key header), so it is delivered again
   * under the same key. "never": nothing can tell whether the cut-off attempt happened; it ends
   * `unknown` (at most once beats a duplicate), never `failed` and never left `running`.
   */
  readonly rerunAfterInterruption: "probe" | "keyed" | "never";
  run(ctx: ActionContext): Promise<ActionOutcome>;
  /**
   * Rebuild the outcome of an action that succeeded before a restart but whose sprite was not
   * resumed yet, when the stored result is not enough (FETCH_CREDENTIAL never stores the secret).
   */
  redeliver?(ctx: ActionContext): Promise<ActionOutcome>;
}

export interface ActionRecord {
  idempotency_key: string;
  project_id: string;
  run_id: string;
  event_hash: string;
  role: string;
  work_item_id: string;
  action: string;
  parameters: Record<string, unknown>;
  blocking: boolean;
  state: ActionState;
  attempts: number;
  next_attempt_at: string;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  resumed: boolean;
  created_at: string;
  updated_at: string;
}

/** What resumes a sprite blocked on an action: its result, or the failure (the supervisor's ResumeOptions). */
export interface ActionResume {
  inputs: Record<string, unknown>;
  context?: Record<string, unknown>;
  secretInputs?: Record<string, string>;
  /** The action failed: the sprite gets the error in `context.error`, inputs unchecked. */
  failure?: { action: string; message: string };
}

/** Resumes a waiting sprite (the supervisor's `resumeRun`). */
export type ResumeFn = (runId: string, payload: ActionResume) => Promise<void>;

/** Errors worth another attempt (a dependency failed: network, 5xx, rate limit). */
export function isTransient(err: unknown): boolean {
  return (err as PmagentError | undefined)?.kind === "unavailable";
}
