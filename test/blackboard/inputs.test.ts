/**
 * Entries from outside that once broke the board: imports that bypassed post's rules, entries
 * posted in_progress (never picked by anyone), impossible dates, NUL in text, deep payloads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/core/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { PROJECT, request, testBoard } from "../helpers/blackboard.js";

const kinds = await availableStoreKinds();

/** An entry in the spec's full form, as `bb export` writes it. */
function exported(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...request(id),
    from: "Bob",
    project_id: PROJECT,
    status: "done",
    created_at: "2026-01-15T10:00:00Z",
    updated_at: "2026-01-15T10:00:00Z",
    ...extra,
  };
}

/** A payload nested `levels` deep (the payload object itself is one level). */
function nested(levels: number): Record<string, unknown> {
  let v: unknown = {};
  for (let i = 1; i < levels; i++) v = { d: v };
  return v as Record<string, unknown>;
}

describe.each(kinds)("blackboard inputs ($name)", (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => t.cleanup());

  it("import refuses an entry written by someone else unless a human imports it, as post does", async () => {
    const { board } = testBoard(t.store);
    await expect(board.import("Aya", exported("imp-1"), { source: "e.jsonl entry 1" })).rejects.toMatchObject({
      code: "permission_refused",
      message:
        "Aya may not import entry imp-1 written by Bob: only a human (Human) imports others' entries as they were",
    });
    expect(await board.find("imp-1")).toBeUndefined();
    await expect(board.import("Bob", exported("imp-1"))).resolves.toMatchObject({ outcome: "created" });
    await expect(board.import("Human", exported("imp-2"))).resolves.toMatchObject({ outcome: "created" });
    expect((await board.get("imp-2")).entry).toMatchObject({ from: "Bob", status: "done" });
  });

  it("refuses an entry posted or imported as in_progress: it would have no claim, so no worker would ever pick it", async () => {
    const { board } = testBoard(t.store);
    await expect(board.post("Human", request("ip-1", { status: "in_progress" }))).rejects.toMatchObject({
      code: "invalid_status",
      kind: "usage",
      message:
        "ip-1 cannot be posted as in_progress: an entry becomes in_progress when a worker claims it; give it status open and it will be claimed",
    });
    await expect(board.import("Human", exported("ip-2", { status: "in_progress" }))).rejects.toThrow(
      "ip-2 cannot be imported as in_progress",
    );
    expect(await board.find("ip-1")).toBeUndefined();
    expect(await board.find("ip-2")).toBeUndefined();
  });

  it.each([
    ["2026-02-30T10:00:00Z", "February 30"],
    ["2026-02-29T10:00:00+09:00", "February 29 of a common year"],
    ["2026-04-31T10:00:00Z", "April 31"],
    ["2026-01-15T24:00:00Z", "hour 24"],
    ["2026-01-15T10:60:00Z", "minute 60"],
    ["2026-01-15T10:00:00+24:00", "a zone 24 hours off"],
  ])("refuses the date %s (%s) on post and import", async (date) => {
    const { board } = testBoard(t.store);
    const message =
      "$.created_at: expected an ISO 8601 date-time with a time zone, naming a real date and time, e.g. 2025-11-30T02:30:00+09:00";
    await expect(board.post("Human", request("d-1", { created_at: date }), "e.json")).rejects.toThrow(message);
    await expect(board.import("Human", exported("d-2", { created_at: date }))).rejects.toThrow(message);
  });

  it("takes February 29 of a leap year, with its zone", async () => {
    const { board } = testBoard(t.store);
    const { stored } = await board.post("Human", request("leap", { created_at: "2028-02-29T23:59:59.5+09:00" }));
    expect(stored.entry.created_at).toBe("2028-02-29T23:59:59.5+09:00");
  });

  it.each([
    ["id", { id: "a\u0000b" }, "$.id: must not contain U+0000 (NUL)"],
    ["to", { to: "A\u0000ya" }, "$.to: must not contain U+0000 (NUL)"],
    ["kind", { kind: "k\u0000" }, "$.kind: must not contain U+0000 (NUL)"],
    ["note", { note: "\u0000" }, "$.note: must not contain U+0000 (NUL)"],
    ["a target doc", { target_docs: ["a\u0000.md"] }, "$.target_docs"],
  ])("refuses NUL in %s with a usage error on both stores", async (_what, extra, message) => {
    const { board } = testBoard(t.store);
    const err = (await board
      .post("Human", { ...request("nul-1"), ...extra }, "e.json")
      .catch((e: unknown) => e)) as Error & { code: string; kind: string };
    expect(err).toMatchObject({ code: "invalid_entry", kind: "usage" });
    expect(err.message).toContain(message);
  });

  it("keeps NUL inside the payload (stored as JSON text, an escape)", async () => {
    const { board } = testBoard(t.store);
    await board.post("Human", request("nul-payload", { payload: { summary: "a\u0000b" } }));
    expect((await board.get("nul-payload")).entry.payload.summary).toBe("a\u0000b");
  });

  it(`refuses a payload nested deeper than ${MAX_JSON_DEPTH} levels with the entry, with a usage error instead of a stack overflow`, async () => {
    const { board } = testBoard(t.store);
    const message = `$.payload: the payload nests deeper than ${MAX_JSON_DEPTH - 1} levels of objects and arrays (MAX_JSON_DEPTH); flatten it`;
    await expect(board.post("Human", request("deep-1", { payload: nested(5000) }), "e.json")).rejects.toThrow(message);
    await expect(board.import("Human", exported("deep-2", { payload: nested(MAX_JSON_DEPTH) }))).rejects.toThrow(
      message,
    );
    // At the limit: the entry is one level, its payload the other 63.
    await expect(
      board.post("Human", request("deep-3", { payload: nested(MAX_JSON_DEPTH - 1) })),
    ).resolves.toMatchObject({ created: true });
  });
});
