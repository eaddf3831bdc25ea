import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { UnavailableError, UsageError } from "../../../src/core/index.js";
import { ActionExecutor, type ActionContext, type ActionHandler, type ResumeFn } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { actionRequest } from "../fixtures.js";

const kinds = await availableStoreKinds();

interface Resumed {
  runId: string;
  payload: Parameters<ResumeFn>[1];
}

function counting(
  run: (ctx: ActionContext, n: number) => Promise<Record<string, unknown>>,
  rerun: ActionHandler["rerunAfterInterruption"] = "probe",
) {
  const calls: ActionContext[] = [];
  const handler: ActionHandler = {
    rerunAfterInterruption: rerun,
    async run(ctx) {
      calls.push(ctx);
      return { stored: await run(ctx, calls.length) };
    },
  };
  return { handler, calls };
}

/** The pid of a process that has exited (an owner that died). */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid!;
}

describe.each(kinds)("action executor ($name)", (kind) => {
  let t: TestStore;
  let resumed: Resumed[];
  const resume: ResumeFn = async (runId, payload) => {
    resumed.push({ runId, payload });
  };
  const executor = (handlers: Record<string, ActionHandler>) =>
    new ActionExecutor({
      store: t.store,
      handlers,
      resume,
      retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
      leaseMs: 60_000,
    });

  beforeEach(async () => {
    t = await kind.open();
    resumed = [];
  });
  afterEach(async () => t.cleanup());

  it("carries out a request once, however often it is handed over", async () => {
    const { handler, calls } = counting(async () => ({ ok: true }));
    const ex = executor({ NOTIFY_USER: handler });
    const req = actionRequest({ action: "NOTIFY_USER", parameters: { message: "hi" } });
    const [a, b] = await Promise.all([ex.submit(req), ex.submit(req)]);
    const c = await ex.submit(req);
    // A second executor (another supervisor process) sees it done too.
    const d = await executor({ NOTIFY_USER: handler }).submit(req);
    expect(calls).toHaveLength(1);
    for (const r of [a, b, c, d]) expect(r).toMatchObject({ state: "succeeded", attempts: 1, result: { ok: true } });
    expect(await ex.actions.list({ runId: "run-1" })).toHaveLength(1);
    expect(a.idempotency_key).toBe(`run-1:${req.eventHash}`);
  });

  it("retries transient failures with backoff, then succeeds", async () => {
    const { handler, calls } = counting(async (_ctx, n) => {
      if (n < 3) throw new UnavailableError("github_unavailable", `flaky ${n}`);
      return { n };
    });
    const record = await executor({ POST_COMMENT: handler }).submit(actionRequest({ action: "POST_COMMENT" }));
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(record).toMatchObject({ state: "succeeded", attempts: 3, result: { n: 3 }, error: null });
  });

  it("fails after the last attempt with the last error", async () => {
    const { handler, calls } = counting(async (_ctx, n) => {
      throw new UnavailableError("webhook_failed", `down ${n}`);
    });
    const record = await executor({ NOTIFY_USER: handler }).submit(actionRequest({ action: "NOTIFY_USER" }));
    expect(calls).toHaveLength(3);
    expect(record).toMatchObject({
      state: "failed",
      attempts: 3,
      error: { code: "webhook_failed", message: "down 3" },
    });
  });

  it("does not retry a permanent failure", async () => {
    const { handler, calls } = counting(async () => {
      throw new UsageError("invalid_parameters", "OPEN_PR parameters is invalid");
    });
    const record = await executor({ OPEN_PR: handler }).submit(actionRequest({ action: "OPEN_PR" }));
    expect(calls).toHaveLength(1);
    expect(record).toMatchObject({ state: "failed", error: { code: "invalid_parameters" } });
  });

  it("fails an unknown action clearly and resumes a blocked sprite with the error", async () => {
    const { handler } = counting(async () => ({}));
    const record = await executor({ OPEN_PR: handler, NOTIFY_USER: handler }).submit(
      actionRequest({ action: "DEPLOY_PROD", blocking: true, runId: "run-u" }),
    );
    expect(record.state).toBe("failed");
    expect(record.error).toEqual({
      code: "unknown_action",
      message: 'unknown action "DEPLOY_PROD": the supervisor carries out NOTIFY_USER, OPEN_PR',
    });
    expect(resumed).toEqual([
      {
        runId: "run-u",
        payload: {
          inputs: {},
          context: {
            action: {
              action: "DEPLOY_PROD",
              idempotency_key: record.idempotency_key,
              state: "failed",
              error: record.error,
            },
          },
          failure: {
            action: "DEPLOY_PROD",
            message: 'unknown action "DEPLOY_PROD": the supervisor carries out NOTIFY_USER, OPEN_PR [unknown_action]',
          },
        },
      },
    ]);
    expect(record.resumed).toBe(true);
  });

  it("resumes a blocked sprite with the result as inputs, once", async () => {
    const handler: ActionHandler = {
      rerunAfterInterruption: "probe",
      run: async () => ({ stored: { number: 7, extra: "x" }, inputs: { number: 7 } }),
    };
    const ex = executor({ OPEN_PR: handler });
    const req = actionRequest({ action: "OPEN_PR", blocking: true, runId: "run-b" });
    await ex.submit(req);
    await ex.submit(req);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.payload.inputs).toEqual({ number: 7 });
    expect((await ex.actions.get(`run-b:${req.eventHash}`))!.resumed).toBe(true);
  });

  it("a non-blocking action resumes nothing", async () => {
    const { handler } = counting(async () => ({}));
    await executor({ NOTIFY_USER: handler }).submit(actionRequest({ action: "NOTIFY_USER" }));
    expect(resumed).toEqual([]);
  });

  it("stores parameters and results redacted", async () => {
    const token = `ghp_${"a1".repeat(18)}`;
    const handler: ActionHandler = {
      rerunAfterInterruption: "probe",
      run: async () => ({ stored: { echoed: `token ${token}` } }),
    };
    const record = await executor({ POST_COMMENT: handler }).submit(
      actionRequest({ action: "POST_COMMENT", parameters: { body: `leaked ${token}` } }),
    );
    expect(record.parameters).toEqual({ body: "leaked [REDACTED]" });
    expect(JSON.stringify(record)).not.toContain(token);
  });

  it("takes over an action whose owner died mid-attempt: a probing handler reruns knowing it was interrupted", async () => {
    const { handler, calls } = counting(async () => ({ done: true }));
    const ex = executor({ POST_COMMENT: handler });
    const req = actionRequest({ action: "POST_COMMENT" });
    await ex.actions.record(req);
    await t.store.run("UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?, attempts = 1", [
      `${hostname()}:${deadPid()}:dead`,
      Date.now() + 3_600_000,
    ]);
    const record = await ex.submit(req);
    expect(calls.map((c) => [c.attempt, c.interrupted])).toEqual([[2, true]]);
    expect(record).toMatchObject({ state: "succeeded", attempts: 2 });
  });

  it("never repeats an interrupted action that cannot look for its own side effect: its outcome is unknown, not failed", async () => {
    const { handler, calls } = counting(async () => ({}), "never");
    const ex = executor({ NOTIFY_USER: handler });
    const req = actionRequest({ action: "NOTIFY_USER", blocking: true });
    await ex.actions.record(req);
    await t.store.run("UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?, attempts = 1", [
      `${hostname()}:${deadPid()}:dead`,
      Date.now() + 3_600_000,
    ]);
    const record = await ex.submit(req);
    expect(calls).toHaveLength(0);
    expect(record.state).toBe("unknown");
    expect(record.error).toEqual({
      code: "action_outcome_unknown",
      message:
        "NOTIFY_USER was cut off by a supervisor crash mid-attempt and its target cannot tell whether it happened; it is not repeated, so that it happens at most once",
    });
    // The blocked sprite is resumed with that as its failure, never left waiting.
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.payload.failure?.message).toContain("[action_outcome_unknown]");
  });

  it("repeats an interrupted action whose target drops a repeat by its key, under the same key", async () => {
    const { handler, calls } = counting(async () => ({ sent: true }), "keyed");
    const ex = executor({ NOTIFY_USER: handler });
    const req = actionRequest({ action: "NOTIFY_USER" });
    await ex.actions.record(req);
    await t.store.run("UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?, attempts = 1", [
      `${hostname()}:${deadPid()}:dead`,
      Date.now() + 3_600_000,
    ]);
    const record = await ex.submit(req);
    expect(calls.map((c) => [c.attempt, c.interrupted, c.idempotencyKey])).toEqual([[2, true, record.idempotency_key]]);
    expect(record).toMatchObject({ state: "succeeded", error: null });
  });

  it("leaves an action alone while a live owner holds its lease", async () => {
    const { handler, calls } = counting(async () => ({}));
    const ex = executor({ POST_COMMENT: handler });
    const req = actionRequest({ action: "POST_COMMENT" });
    await ex.actions.record(req);
    await t.store.run("UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?", [
      "other-host:1:live",
      Date.now() + 3_600_000,
    ]);
    expect((await ex.submit(req)).state).toBe("running");
    expect(calls).toHaveLength(0);
    // Once the lease has expired, the owner is presumed gone.
    await t.store.run("UPDATE lattice_actions SET lease_expires_ms = ?", [Date.now() - 1]);
    expect((await ex.submit(req)).state).toBe("succeeded");
    expect(calls.map((c) => c.interrupted)).toEqual([true]);
  });

  it("resumes after a restart a sprite whose action succeeded before the crash, redelivering what was not stored", async () => {
    const handler: ActionHandler = {
      rerunAfterInterruption: "probe",
      run: async () => ({
        stored: { name: "K", delivered: true },
        inputs: { name: "K" },
        secretInputs: { value: "s3cret-value" },
      }),
      redeliver: async () => ({
        stored: { name: "K", delivered: true },
        inputs: { name: "K" },
        secretInputs: { value: "s3cret-value" },
      }),
    };
    const ex = executor({ FETCH_CREDENTIAL: handler });
    const req = actionRequest({ action: "FETCH_CREDENTIAL", blocking: true });
    await ex.actions.record(req);
    await t.store.run("UPDATE lattice_actions SET state = 'succeeded', attempts = 1, result_json = ?", [
      JSON.stringify({ name: "K", delivered: true }),
    ]);
    await ex.submit(req);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.payload).toMatchObject({ inputs: { name: "K" }, secretInputs: { value: "s3cret-value" } });
  });
});
