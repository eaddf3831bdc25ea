import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Blackboard } from "../../src/blackboard/index.js";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { buildLaneStatus, collectBoard, collectLaneBoard, laneCycles } from "../../src/kai/index.js";
import { buildWhatChanged } from "../../src/kai/reports/what-changed.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { request, testBoard } from "../helpers/blackboard.js";

const kinds = await availableStoreKinds();
const T0 = Date.parse("2026-01-15T10:00:00Z");
const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms);

describe.each(kinds)("blackboard collector ($name)", (kind) => {
  let t: TestStore;
  let collect: (cutoff: Date) => ReturnType<typeof collectBoard>;

  beforeAll(async () => {
    t = await kind.open();
    const { board, clock } = testBoard(t.store, T0);
    await board.post("Human", { ...request("req-1"), source_issue: "#841", source_comment_id: 1001 });
    clock.advance(HOUR);
    await board.transition("Aya", "req-1", "in_progress");
    clock.advance(HOUR);
    await board.transition("Aya", "req-1", "done");
    await board.post(
      "Aya",
      request("req-1-review", {
        to: "Sho",
        kind: "doc_update_review_request",
        source_issue: 841,
        source_run_id: 555,
        payload: {
          summary: "review p1",
          details: { proposal_path: "reports/p1.json" },
          refs: { artifact_path: "reports/p1.json" },
        },
        payload_ref: { kind: "path", value: "reports/p1.json" },
      }),
    );
    clock.advance(HOUR);
    await board.transition("Sho", "req-1-review", "in_progress");
    clock.advance(HOUR);
    // Imported from GitHub later than it was written there: no local history before the import.
    await board.put("github-sync", {
      ...request("imported-1"),
      from: "Human",
      project_id: "vpm-mini",
      status: "done",
      target_docs: [{ path: "docs/a.md", section: "## A" }],
      created_at: "2026-01-14T00:00:00Z",
      updated_at: "2026-01-15T13:30:00Z",
    });
    collect = (cutoff) => collectBoard(board, cutoff);
  });
  afterAll(async () => t.cleanup());

  it("hands over entries with their ids, issue, comment and run references, summary and refs", async () => {
    const now = await collect(at(T0 + 5 * HOUR));
    expect(now.map((e) => [e.id, e.status])).toEqual([
      ["imported-1", "done"],
      ["req-1", "done"],
      ["req-1-review", "in_progress"],
    ]);
    expect(now[1]).toEqual({
      id: "req-1",
      from: "Human",
      to: "Aya",
      kind: "doc_update_proposal_request",
      status: "done",
      created_at: "2026-01-15T10:00:00.000Z",
      updated_at: "2026-01-15T12:00:00.000Z",
      source_issue: 841,
      source_comment_id: "1001",
      source_run_id: null,
      summary: "request req-1",
      refs: {},
      target_docs: ["STATE/current_state.md"],
      details: {},
    });
    // The origin's roles name their files in payload.details and the top-level payload_ref: both are handed over.
    expect(now[2]).toMatchObject({
      source_issue: 841,
      source_run_id: "555",
      summary: "review p1",
      refs: { artifact_path: "reports/p1.json" },
      details: { proposal_path: "reports/p1.json" },
      payload_ref: { kind: "path", value: "reports/p1.json" },
    });
    expect(now[0]!.target_docs).toEqual(["docs/a.md"]);
  });

  it("as of a past time: later entries are left out and statuses come from the history", async () => {
    expect(
      (await collect(at(T0 + HOUR / 2)))
        .filter((e) => e.id.startsWith("req"))
        .map((e) => [e.id, e.status, e.updated_at]),
    ).toEqual([["req-1", "open", "2026-01-15T10:00:00.000Z"]]);
    expect(
      (await collect(at(T0 + 1.5 * HOUR)))
        .filter((e) => e.id.startsWith("req"))
        .map((e) => [e.id, e.status, e.updated_at]),
    ).toEqual([["req-1", "in_progress", "2026-01-15T11:00:00.000Z"]]);
    expect(
      (await collect(at(T0 + 2.5 * HOUR))).filter((e) => e.id.startsWith("req")).map((e) => [e.id, e.status]),
    ).toEqual([
      ["req-1", "done"],
      ["req-1-review", "open"],
    ]);
  });

  it("an entry imported after the cutoff but written before it counts as first posted (open)", async () => {
    const before = await collect(at(Date.parse("2026-01-15T00:00:00Z")));
    expect(before.map((e) => [e.id, e.status, e.updated_at])).toEqual([["imported-1", "open", "2026-01-14T00:00:00Z"]]);
    expect(await collect(at(Date.parse("2026-01-13T00:00:00Z")))).toEqual([]);
  });
});

describe.each(kinds)("lane-scoped blackboard collector ($name)", (kind) => {
  let t: TestStore;
  let board: Blackboard;
  const START = Date.parse("2026-02-01T00:00:00Z");
  const DAY = 24 * HOUR;
  const lane = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "t").lanes[0]!;
  const chain = lane.roles.map((r) => ({ role: r.name, kind: r.allowed_kinds[0]!, next: r.next }));

  beforeAll(async () => {
    t = await kind.open();
    const tb = testBoard(t.store, START);
    board = tb.board;
    // 12 cycles a day apart; cycle c goes through (c % 6) + 1 roles; every 5th ends in error.
    for (let c = 0; c < 12; c++) {
      tb.clock.now = START + c * DAY;
      let id = `req-${c}`;
      let from = "Human";
      const steps = (c % 6) + 1;
      for (let k = 0; k < Math.min(steps, chain.length); k++) {
        const step = chain[k]!;
        await board.post(from, request(id, { to: step.role, kind: step.kind }));
        tb.clock.advance(HOUR);
        const last = k === steps - 1;
        if (!last || k === chain.length - 1) {
          await board.transition(step.role, id, c % 5 === 4 && k === 1 ? "error" : "done");
          if (c % 5 === 4 && k === 1) break;
        } else if (c % 2 === 0) await board.transition(step.role, id, "in_progress");
        from = step.role;
        id = `${id}${step.next?.id_suffix ?? "-x"}`;
        tb.clock.advance(HOUR);
      }
    }
    // a late payload edit on an old entry, after everything else
    tb.clock.now = START + 20 * DAY;
    await board.change("Human", "req-1", { note: "late note" });
    // A root whose id extends another root's (its cycle stays apart), with a follow-up.
    tb.clock.now = START + 6.5 * DAY;
    await board.post("Human", request("req-2-again"));
    tb.clock.advance(HOUR);
    await board.transition("Aya", "req-2-again", "done");
    await board.post("Aya", request("req-2-again-review", { to: "Sho", kind: "doc_update_review_request" }));
    // Written elsewhere on day 3 and finished there on day 21, imported on day 21.
    tb.clock.now = START + 21 * DAY;
    await board.put("github-sync", {
      ...request("req-imp"),
      from: "Human",
      project_id: "vpm-mini",
      status: "done",
      created_at: new Date(START + 3.2 * DAY).toISOString(),
      updated_at: new Date(START + 21 * DAY).toISOString(),
    });
  });
  afterAll(async () => t.cleanup());

  it.each([
    ["now, 7 days", "2026-03-01T00:00:00Z", 7],
    ["now, 30 days", "2026-03-01T00:00:00Z", 30],
    ["as of day 5, 2 days", "2026-02-05T12:00:00Z", 2],
    ["as of day 9, 3 days", "2026-02-09T01:30:00Z", 3],
  ])("gives the same lane_status and what_changed as reading every entry (%s)", async (_name, until, days) => {
    const window = { since: new Date(Date.parse(until) - days * DAY), until: new Date(until) };
    const all = await collectBoard(board, window.until);
    const scoped = await collectLaneBoard(board, lane, ["Human"], window);
    expect(scoped.length).toBeLessThanOrEqual(all.length);
    const ev = (b: typeof all) => ({ git: null, state_doc: null, board: b, runs: [], github: null, notes: [] });
    const statusCtx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: window.until };
    expect(buildLaneStatus(statusCtx, ev(scoped))).toEqual(buildLaneStatus(statusCtx, ev(all)));
    const changesCtx = {
      project_id: "vpm-mini",
      lane,
      humans: ["Human"],
      since: window.since,
      until: window.until,
      max_highlights: 50,
    };
    expect(buildWhatChanged(changesCtx, ev(scoped))).toEqual(buildWhatChanged(changesCtx, ev(all)));
  });

  it("gives the same answers at every cutoff from before the first cycle to after the last change", async () => {
    const compared: string[] = [];
    for (let until = START - DAY; until <= START + 22 * DAY; until += 7 * HOUR) {
      for (const days of [1, 3]) {
        const window = { since: new Date(until - days * DAY), until: new Date(until) };
        const all = await collectBoard(board, window.until);
        const scoped = await collectLaneBoard(board, lane, ["Human"], window);
        const ev = (b: typeof all) => ({ git: null, state_doc: null, board: b, runs: [], github: null, notes: [] });
        const statusCtx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: window.until };
        const changesCtx = { ...statusCtx, since: window.since, until: window.until, max_highlights: 50 };
        const label = `${window.until.toISOString()}, ${days} days`;
        expect({ label, status: buildLaneStatus(statusCtx, ev(scoped)) }).toEqual({
          label,
          status: buildLaneStatus(statusCtx, ev(all)),
        });
        // lane_status's own read leaves the window's other cycles out and gives the same answer.
        const forStatus = await collectLaneBoard(board, lane, ["Human"], window, { windowed: false });
        expect({ label, status: buildLaneStatus(statusCtx, ev(forStatus)) }).toEqual({
          label,
          status: buildLaneStatus(statusCtx, ev(all)),
        });
        expect({ label, changes: buildWhatChanged(changesCtx, ev(scoped)) }).toEqual({
          label,
          changes: buildWhatChanged(changesCtx, ev(all)),
        });
        compared.push(label);
      }
    }
    expect(compared.length).toBeGreaterThan(150);
  });

  it("reads whole entries only for the cycles an answer shows", async () => {
    const until = new Date(START + 11.5 * DAY);
    const scoped = await collectLaneBoard(board, lane, ["Human"], { since: new Date(until.getTime() - DAY), until });
    // The latest cycle (req-11: changed in the window, completed), whole; the older cycles are not
    // read at all, but the root read carries its number among all the lane's roots.
    expect(scoped.map((e) => e.id)).toEqual([
      "req-11",
      "req-11-review",
      "req-11-review-apply",
      "req-11-review-apply-pm_snapshot",
      "req-11-review-apply-pm_snapshot-done",
    ]);
    expect(scoped[0]).toMatchObject({ summary: "request req-11", cycle: 14 });
    expect(scoped.slice(1).map((e) => e.cycle)).toEqual([undefined, undefined, undefined, undefined]);
    // Over three days: also the cycles changed then (req-9, req-10), each numbered as from the whole board.
    const wider = await collectLaneBoard(board, lane, ["Human"], { since: new Date(until.getTime() - 3 * DAY), until });
    const numbered = laneCycles(await collectBoard(board, until), lane, ["Human"], []);
    expect(numbered.at(-1)!.id).toBe("cycle-14");
    expect(wider.filter((e) => e.cycle !== undefined).map((e) => [e.id, `cycle-${e.cycle}`])).toEqual(
      numbered.filter((c) => ["req-9", "req-10", "req-11"].includes(c.root.id)).map((c) => [c.root.id, c.id]),
    );
  });
});

describe.each(kinds)("lane-scoped collector: the last completed cycle ($name)", (kind) => {
  let t: TestStore;
  const lane = parseConfig(
    JSON.stringify({
      project_id: "vpm-mini",
      lanes: [
        {
          layer: "layer_b",
          name: "doc_update",
          roles: [
            {
              name: "Aya",
              allowed_kinds: ["doc_update_proposal_request"],
              next: { to: "Sho", kind: "doc_update_review_request", id_suffix: "-review" },
            },
            { name: "Sho", allowed_kinds: ["doc_update_review_request", "doc_update_apply_request"] },
          ],
        },
      ],
    }),
    "t",
  ).lanes[0]!;
  afterAll(async () => t.cleanup());

  // Sho also picks an apply kind: the lane ends in its STATE document, so a lagging document is advised on.
  it("is the newest cycle by its root that completed, even when an older one completed after it", async () => {
    t = await kind.open();
    const { board, clock } = testBoard(t.store, T0);
    await board.post("Human", request("a"));
    clock.advance(HOUR);
    await board.post("Human", request("b"));
    await board.transition("Aya", "a", "done");
    await board.transition("Aya", "b", "done");
    clock.advance(HOUR);
    await board.post("Aya", request("b-review", { to: "Sho", kind: "doc_update_review_request" }));
    clock.advance(HOUR);
    await board.transition("Sho", "b-review", "done");
    clock.advance(HOUR);
    // Cycle a's last step is written (and done) after b's: the newest done final entry is a's.
    await board.post("Aya", request("a-review", { to: "Sho", kind: "doc_update_review_request" }));
    clock.advance(HOUR);
    await board.transition("Sho", "a-review", "done");
    clock.advance(HOUR);
    await board.post("Human", request("c"));
    const window = { since: new Date(T0 + 5.5 * HOUR), until: new Date(T0 + 7 * HOUR) };
    const ev = (b: Awaited<ReturnType<typeof collectBoard>>) => ({
      git: null,
      state_doc: null,
      board: b,
      runs: [],
      github: null,
      notes: [],
    });
    const ctx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: window.until };
    const all = buildLaneStatus(ctx, ev(await collectBoard(board, window.until)));
    const scoped = buildLaneStatus(
      ctx,
      ev(await collectLaneBoard(board, lane, ["Human"], window, { windowed: false })),
    );
    expect(scoped).toEqual(all);
    expect(scoped.next_suggested_actions.find((a) => a.id === "update-state-doc")!.title).toBe(
      "Update STATE/current_state.md with the outcome of cycle-2",
    );
  });
});
