import { beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ActionSink, Supervisor } from "../../src/lattice/index.js";
import { CLI } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const KEY = "sk-test-fetched-model-key-0123456789";
const kinds = (await availableStoreKinds()).filter((k) => k.name === "sqlite");
const fake = useFakeOpenAI({ clearRequests: false });

const review = {
  level: "hard_gate",
  decision: "approve",
  summary: "keeps every section",
  claims: [],
  planning_feedback: [],
};

describe.each(kinds)("the role agent fetches its model key from the supervisor ($name)", (kind) => {
  const fx = useSupervisorFixture(kind, {
    config: () => ({ model: { base_url: fake.baseURL, model: "gpt-test", max_retries: 0 } }),
  });
  beforeEach(async () => {
    await fx.board.post("Human", {
      id: "b-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "check the docs" },
    });
  });

  const command = [process.execPath, CLI, "agent", "--role", "reviewer", "--lane", "test/build"];

  it("FETCH_CREDENTIAL: the sprite waits, is resumed with the key through resume.json, and completes; the key is stored nowhere", async () => {
    const actions: ActionSink = {
      async onActionRequest({ run, event }) {
        const p = event.event.payload as { action: string; parameters: { name: string } };
        expect(p).toMatchObject({ action: "FETCH_CREDENTIAL", parameters: { name: "OPENAI_API_KEY" } });
        await sup.resumeRun(run.id, { inputs: { name: p.parameters.name }, secretInputs: { value: KEY } });
        return { delivered: true };
      },
    };
    const sup: Supervisor = fx.tp.supervisor({ actions }, { env: { PATH: process.env.PATH ?? "" } });
    fake.reply({ json: review });
    const started = await sup.startRun({ role: "Builder", entryId: "b-1", command });
    const run = await sup.whenIdle(started.id);
    expect(run.state).toBe("succeeded");
    const events = await sup.runs.events(run.id);
    expect(events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(["ACTION_REQUEST", "WAITING", "ARTIFACT", "COMPLETED"]),
    );
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(JSON.stringify(await sup.runs.logs(run.id))).not.toContain(KEY);
    expect(readFileSync(join(run.workspace, ".lattice", "outbox.jsonl"), "utf8")).not.toContain(KEY);
  });

  it("without an action executor the resumed sprite reports the failure as ERROR and the run fails", async () => {
    const sup = fx.tp.supervisor(undefined, { env: { PATH: process.env.PATH ?? "" } });
    const started = await sup.startRun({ role: "Builder", entryId: "b-1", command });
    const run = await sup.whenIdle(started.id);
    expect(run.state).toBe("failed");
    expect(run.reason).toMatch(
      /^ERROR: the supervisor could not hand over the model key \(FETCH_CREDENTIAL\): no action executor is configured/,
    );
  });
});
