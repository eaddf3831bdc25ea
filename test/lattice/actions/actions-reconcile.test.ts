/**
 * A supervisor that dies while a non-blocking action of a run is under way, after the run itself
 * finished (the sprite asked for the action right before COMPLETED): reconciliation carries the
 * action out whatever the run's state, under the same idempotency key, and a delivered
 * notification is never recorded as failed. The crash is reproduced exactly: a sink that records
 * the action as running under a dead owner, as a killed executor leaves it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { Redactor } from "../../../src/core/index.js";
import {
  ActionExecutor,
  ActionStore,
  WebhookNotifier,
  notifyUserHandler,
  type ActionSink,
} from "../../../src/lattice/index.js";
import { projectSupervisor } from "../../../src/app/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { actionRequest } from "../fixtures.js";
import { PMAGENT } from "../helpers.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

/** The pid of a process that has exited: the owner the killed supervisor left on its action. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid!;
}

describe.each(kinds)("reconciling actions of runs that finished ($name)", (kind) => {
  let hook: Server;
  let url: string;
  const received: string[] = [];
  const fx = useSupervisorFixture(kind, { config: () => ({ notify: { webhook_url: url } }) });

  beforeAll(async () => {
    hook = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received.push(String(req.headers["idempotency-key"]));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => hook.close(() => r())));
  beforeEach(async () => {
    received.length = 0;
  });

  /** A sink that dies as a killed supervisor does: the action left running under a dead owner. */
  function dyingSink(options: { deliverFirst: boolean; markDispatched: boolean }): ActionSink {
    return {
      async onActionRequest({ run, event }) {
        const actions = new ActionStore(fx.ts.store);
        const payload = event.event.payload as {
          action: string;
          parameters: Record<string, unknown>;
          blocking: boolean;
        };
        const key = `${run.id}:${event.id}`;
        await actions.record({
          projectId: run.project_id,
          runId: run.id,
          eventHash: event.id,
          role: run.role,
          workItemId: run.work_item_id,
          workspace: run.workspace,
          ...payload,
        });
        if (options.deliverFirst) {
          await new WebhookNotifier(url, new Redactor()).notify({
            message: String(payload.parameters.message),
            level: "info",
            project_id: run.project_id,
            idempotency_key: key,
          });
        }
        await fx.ts.store.run(
          "UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?, attempts = 1 WHERE idempotency_key = ?",
          [`${hostname()}:${deadPid()}:gone`, Date.now() + 3_600_000, key],
        );
        if (options.markDispatched) return { status: "running", idempotency_key: key };
        throw new Error("the supervisor died here");
      },
    };
  }

  const steps = [
    {
      emit: "ACTION_REQUEST",
      payload: { action: "NOTIFY_USER", parameters: { message: "almost done" }, blocking: false },
    },
    { emit: "COMPLETED", payload: { status: "success", summary: "done" } },
  ];

  for (const [name, options] of [
    [
      "an action cut off after delivering, its event never marked dispatched",
      { deliverFirst: true, markDispatched: false },
    ],
    [
      "an action cut off before delivering, its event never marked dispatched",
      { deliverFirst: false, markDispatched: false },
    ],
    ["an action left running although its event was marked dispatched", { deliverFirst: false, markDispatched: true }],
  ] as const) {
    it(`finishes ${name}, and records a delivered notification as succeeded`, async () => {
      const first = fx.tp.supervisor({ actions: dyingSink(options) });
      const run = await first.startRun({ role: "Builder", command: fx.tp.sprite("notify", { steps }) });
      expect(run.state).toBe("succeeded");
      const [before] = await new ActionStore(fx.ts.store).list({ runId: run.id });
      expect(before).toMatchObject({ state: "running", action: "NOTIFY_USER" });

      const restarted = projectSupervisor({
        store: fx.ts.store,
        project: fx.tp.project,
        pmagentCommand: PMAGENT,
        pollMs: 20,
        consoleWrite: () => undefined,
      });
      const settled = await restarted.reconcile();
      // Reconcile names the run whose action it carried out (it used to say there was nothing to do).
      expect(settled.map((r) => [r.id, r.state])).toEqual([[run.id, "succeeded"]]);
      const [after] = await new ActionStore(fx.ts.store).list({ runId: run.id });
      expect(after).toMatchObject({
        state: "succeeded",
        attempts: 2,
        error: null,
        result: { delivered_to: ["webhook", "console"] },
      });
      // Delivered again under the same key (the receiver drops the repeat): no other key reached it.
      expect(new Set(received)).toEqual(new Set([before!.idempotency_key]));
      expect(received.length).toBe(options.deliverFirst ? 2 : 1);
      // Nothing left to do: a second reconcile finds nothing.
      expect(await restarted.reconcile()).toEqual([]);
    });
  }

  describe("a webhook whose answer is lost", () => {
    let lossy: Server;
    let lossyUrl: string;
    beforeAll(async () => {
      // Takes the notification, then drops the connection instead of answering.
      lossy = createServer((req) => {
        req.resume();
        req.on("end", () => {
          received.push(String(req.headers["idempotency-key"]));
          req.socket.destroy();
        });
      });
      await new Promise<void>((r) => lossy.listen(0, "127.0.0.1", () => r()));
      lossyUrl = `http://127.0.0.1:${(lossy.address() as AddressInfo).port}/hook`;
    });
    afterAll(() => new Promise<void>((r) => lossy.close(() => r())));

    const notifier = (target: string) =>
      new ActionExecutor({
        store: fx.ts.store,
        handlers: { NOTIFY_USER: notifyUserHandler([new WebhookNotifier(target, new Redactor())]) },
        resume: async () => undefined,
        retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 },
      });

    it("records a notification the receiver took but never answered as unknown, not failed", async () => {
      const record = await notifier(lossyUrl).submit(
        actionRequest({ action: "NOTIFY_USER", parameters: { message: "hello" } }),
      );
      expect(received).toEqual([record.idempotency_key, record.idempotency_key]);
      expect(record).toMatchObject({ state: "unknown", attempts: 2, error: { code: "webhook_unreachable" } });
    });

    it("records a notification that never reached a receiver (connection refused) as failed", async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const record = await notifier(`http://127.0.0.1:${port}/hook`).submit(
        actionRequest({ action: "NOTIFY_USER", parameters: { message: "hello" } }),
      );
      expect(record).toMatchObject({
        state: "failed",
        attempts: 2,
        error: {
          code: "webhook_unreachable",
          message: expect.stringMatching(
            /^notification webhook http:\/\/127\.0\.0\.1:\d+ is unreachable: fetch failed$/,
          ),
        },
      });
    });
  });
});
