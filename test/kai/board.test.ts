import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectBoard } from "../../src/kai/index.js";
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
    await board.post("Aya", request("req-1-review", { to: "Sho", kind: "doc_update_review_request", source_issue: 841, source_run_id: 555, payload: { summary: "review p1", refs: { artifact_path: "reports/p1.json" } } }));
    clock.advance(HOUR);
    await board.transition("Sho", "req-1-review", "in_progress");
    clock.advance(HOUR);
    // Imported from GitHub later than it was written there: no local history before the import.
    await board.put("github-sync", { ...request("imported-1"), from: "Human", project_id: "vpm-mini", status: "done", target_docs: [{ path: "docs/a.md", section: "## A" }], created_at: "2026-01-14T00:00:00Z", updated_at: "2026-01-15T13:30:00Z" });
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
    });
    expect(now[2]).toMatchObject({ source_issue: 841, source_run_id: "555", summary: "review p1", refs: { artifact_path: "reports/p1.json" } });
    expect(now[0]!.target_docs).toEqual(["docs/a.md"]);
  });

  it("as of a past time: later entries are left out and statuses come from the history", async () => {
    expect((await collect(at(T0 + HOUR / 2))).filter((e) => e.id.startsWith("req")).map((e) => [e.id, e.status, e.updated_at])).toEqual([["req-1", "open", "2026-01-15T10:00:00.000Z"]]);
    expect((await collect(at(T0 + 1.5 * HOUR))).filter((e) => e.id.startsWith("req")).map((e) => [e.id, e.status, e.updated_at])).toEqual([["req-1", "in_progress", "2026-01-15T11:00:00.000Z"]]);
    expect((await collect(at(T0 + 2.5 * HOUR))).filter((e) => e.id.startsWith("req")).map((e) => [e.id, e.status])).toEqual([
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
