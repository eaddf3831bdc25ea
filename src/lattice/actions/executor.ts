import { PmagentError, Redactor, type Logger } from "../../core/index.js";
import type { Store } from "../../store/index.js";
import { ActionStore, idempotencyKey, newOwner } from "./action-store.js";
import {
  isTransient,
  type ActionHandler,
  type ActionOutcome,
  type ActionRecord,
  type ActionRequest,
  type ResumeFn,
} from "./types.js";

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Delay before the second attempt; doubles each time, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

export interface ActionExecutorOptions {
  store: Store;
  handlers: Record<string, ActionHandler>;
  /** Resumes a sprite waiting on a blocking action. */
  resume: ResumeFn;
  logger?: Logger;
  redactor?: Redactor;
  retry?: Partial<RetryPolicy>;
  leaseMs?: number;
  clock?: () => number;
}

export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof PmagentError) return { code: err.code, message: err.message };
  return { code: "action_failed", message: (err as Error)?.message ?? String(err) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Carries out ACTION_REQUESTs at most once. Each request becomes a row keyed by run id + event
 * hash; an attempt first claims the row (pending → running, with an owner and a lease), then runs
 * the handler, then records the outcome. A transient failure goes back to pending with a backoff;
 * a blocking action's outcome (result or error) resumes the waiting sprite.
 */
export class ActionExecutor {
  readonly actions: ActionStore;
  private readonly owner = newOwner();
  private readonly retry: RetryPolicy;
  private readonly leaseMs: number;
  private readonly inFlight = new Map<string, Promise<ActionRecord>>();

  constructor(private readonly options: ActionExecutorOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.leaseMs = options.leaseMs ?? 60_000;
    this.actions = new ActionStore(options.store, options.redactor ?? new Redactor(), options.clock);
  }

  /**
   * Record and carry out one request (also a request handed over again after a restart). Resolves
   * with the final record once the action has succeeded or failed, or with the current record when
   * another live process owns it.
   */
  submit(request: ActionRequest): Promise<ActionRecord> {
    const key = idempotencyKey(request.runId, request.eventHash);
    let running = this.inFlight.get(key);
    if (!running) {
      running = this.drive(request).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    return running;
  }

  /** Wait for every action this executor is carrying out. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private async drive(request: ActionRequest): Promise<ActionRecord> {
    let record = await this.actions.record(request);
    const key = record.idempotency_key;
    for (;;) {
      if (record.state === "succeeded" || record.state === "failed" || record.state === "unknown") {
        if (record.blocking && !record.resumed) await this.resumeWith(request, record);
        return (await this.actions.get(key))!;
      }
      const claim = await this.actions.claim(key, this.owner, this.leaseMs);
      if (!claim) {
        const now = await this.actions.get(key);
        if (!now || now.state === "running") return now ?? record; // a live owner carries it out
        if (now.state === "pending") {
          await sleep(Math.max(0, Date.parse(now.next_attempt_at) - (this.options.clock ?? Date.now)()));
        }
        record = now;
        continue;
      }
      await this.attempt(request, claim.record, claim.interrupted);
      record = (await this.actions.get(key))!;
    }
  }

  private async attempt(request: ActionRequest, record: ActionRecord, interrupted: boolean): Promise<void> {
    const key = record.idempotency_key;
    const handler = Object.hasOwn(this.options.handlers, request.action)
      ? this.options.handlers[request.action]
      : undefined;
    const log = this.options.logger;
    if (!handler) {
      const known = Object.keys(this.options.handlers).sort().join(", ");
      await this.actions.finish(key, this.owner, {
        state: "failed",
        error: {
          code: "unknown_action",
          message: `unknown action "${request.action}": the supervisor carries out ${known}`,
        },
      });
      return;
    }
    if (interrupted && handler.rerunAfterInterruption === "never") {
      // It may have happened: recorded as neither done nor failed, and not repeated.
      await this.actions.finish(key, this.owner, {
        state: "unknown",
        error: {
          code: "action_outcome_unknown",
          message: `${request.action} was cut off by a supervisor crash mid-attempt and its target cannot tell whether it happened; it is not repeated, so that it happens at most once`,
        },
      });
      return;
    }
    const beat = setInterval(
      () => void this.actions.heartbeat(key, this.owner, this.leaseMs).catch(() => undefined),
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    let outcome: ActionOutcome;
    try {
      log?.info({ action: request.action, key, attempt: record.attempts }, "action attempt");
      outcome = await handler.run({ request, idempotencyKey: key, attempt: record.attempts, interrupted });
    } catch (err) {
      const error = errorOf(err);
      if (isTransient(err) && record.attempts < this.retry.maxAttempts) {
        const delay = backoffMs(this.retry, record.attempts);
        log?.warn(
          { action: request.action, key, attempt: record.attempts, code: error.code, retry_in_ms: delay },
          "action failed; will retry",
        );
        await this.actions.finish(key, this.owner, {
          state: "pending",
          error,
          retryAtMs: (this.options.clock ?? Date.now)() + delay,
        });
      } else if ((err as PmagentError).details?.maybe_delivered === true) {
        // The last attempt may have reached its target (a timeout once the request was sent): not "failed".
        log?.warn(
          { action: request.action, key, attempt: record.attempts, code: error.code },
          "action outcome unknown",
        );
        await this.actions.finish(key, this.owner, { state: "unknown", error });
      } else {
        log?.warn({ action: request.action, key, attempt: record.attempts, code: error.code }, "action failed");
        await this.actions.finish(key, this.owner, { state: "failed", error });
      }
      return;
    } finally {
      clearInterval(beat);
    }
    if (await this.actions.finish(key, this.owner, { state: "succeeded", result: outcome.stored })) {
      if (request.blocking) await this.resumeWith(request, (await this.actions.get(key))!, outcome);
    }
  }

  /** Resume the sprite blocked on this action with its result, or with its error. */
  private async resumeWith(request: ActionRequest, record: ActionRecord, outcome?: ActionOutcome): Promise<void> {
    const handler = Object.hasOwn(this.options.handlers, record.action)
      ? this.options.handlers[record.action]
      : undefined;
    if (record.state === "succeeded" && outcome === undefined && handler?.redeliver) {
      // The stored result lacks what was never stored (a secret): the handler produces it again.
      outcome = await handler.redeliver({
        request,
        idempotencyKey: record.idempotency_key,
        attempt: record.attempts,
        interrupted: false,
      });
    }
    const action = { action: record.action, idempotency_key: record.idempotency_key, state: record.state };
    if (record.state === "succeeded") {
      const inputs = outcome?.inputs ?? outcome?.stored ?? record.result ?? {};
      await this.options.resume(record.run_id, {
        inputs,
        // The result is in the context too: when it does not satisfy the WAITING event's
        // expected_inputs, a person's resume carries it (the spec's PR_REVIEW after OPEN_PR).
        context: { action: { ...action, result: inputs } },
        ...(outcome?.secretInputs ? { secretInputs: outcome.secretInputs } : {}),
      });
    } else {
      const error = record.error ?? { code: "action_failed", message: "the action failed" };
      await this.options.resume(record.run_id, {
        inputs: {},
        context: { action: { ...action, error } },
        failure: { action: record.action, message: `${error.message} [${error.code}]` },
      });
    }
    await this.actions.markResumed(record.idempotency_key);
  }
}
