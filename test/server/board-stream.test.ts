import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Blackboard, type StoredEntry } from "../../src/blackboard/index.js";
import type { SqlParam, Store } from "../../src/store/index.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, watchSse, type SseWatch, type TestServer } from "./helpers.js";

const BOARD = 2_000;
const CLIENTS = 25;

/** The real store, counting the statements it is asked to read and the rows they return. */
function counted(store: Store): { store: Store; reads: { statements: number; rows: number } } {
  const reads = { statements: 0, rows: 0 };
  const count = (rows: number) => {
    reads.statements++;
    reads.rows += rows;
  };
  const wrapped = new Proxy(store, {
    get(target, key) {
      if (key === "all")
        return async (sql: string, params?: readonly SqlParam[]) =>
          target.all(sql, params).then((rows) => (count(rows.length), rows));
      if (key === "get")
        return async (sql: string, params?: readonly SqlParam[]) =>
          target.get(sql, params).then((row) => (count(row === undefined ? 0 : 1), row));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, reads };
}

/** Resolve once `condition()` holds, checked every few ms; fail after `boundMs` (a guard, not a measurement). */
async function until(condition: () => boolean, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the live board stream (/v1/entries/stream) sends changes, not the board", () => {
  let ts: TestStore;
  let s: TestServer;
  let board: Blackboard;
  let reads: { statements: number; rows: number };
  let clients: SseWatch[] = [];
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    await ts.store.transaction(async (tx) => {
      // A big board, written in one go (as rows a long-lived project has).
      const at = Date.parse("2026-01-01T00:00:00Z");
      for (let i = 0; i < BOARD; i++) {
        const id = `old-${String(i).padStart(5, "0")}`;
        const iso = new Date(at + i).toISOString();
        const entry = {
          id,
          from: "Human",
          to: "Builder",
          project_id: "demo",
          kind: "build_request",
          payload: { summary: `entry ${i}` },
          created_at: iso,
        };
        await tx.run(
          "INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, updated_at, entry_json, content_hash) VALUES (?, ?, 1, 'done', 'Human', 'Builder', 'build_request', ?, ?, ?, ?, ?)",
          ["demo", id, at + i, at + i, iso, JSON.stringify(entry), id],
        );
        await tx.run(
          "INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json) VALUES ('demo', ?, 1, ?, ?, 'Human', 'post', NULL, 'done', '{}')",
          [id, iso, at + i],
        );
      }
    });
    const c = counted(ts.store);
    reads = c.reads;
    s = await startServer({ ...ts, store: c.store });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await s?.close();
    await ts?.cleanup();
  });

  it("gives each client the board once, then nothing while idle, reading nothing of the board per poll", async () => {
    clients = await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        watchSse(`${s.url}/v1/entries/stream`, { authorization: `Bearer ${TOKENS.Human}` }),
      ),
    );
    await Promise.all(clients.map((c) => c.until((f) => f.length > 0)));
    for (const c of clients) {
      expect(c.frames.map((f) => f.event)).toEqual(["entries"]);
      expect((c.frames[0]!.data as StoredEntry[]).length).toBe(BOARD);
    }
    // Idle: the server polls (one statement each time) and reads no row, whatever the board's size or the clients' number.
    const before = { ...reads };
    await until(() => reads.statements >= before.statements + 4, "four polls of an idle board");
    const idle = { statements: reads.statements - before.statements, rows: reads.rows - before.rows };
    expect(idle.rows).toBe(0);
    for (const c of clients) expect(c.frames.map((f) => f.event)).toEqual(["entries"]);
  });

  it("sends a change to every client once, as the changed entry only", async () => {
    const before = { ...reads };
    const { stored } = await board.post("Human", { id: "new-1", to: "Reviewer", kind: "review_request" });
    await Promise.all(clients.map((c) => c.until((f) => f.length > 1)));
    const changeReads = { rows: reads.rows - before.rows };
    for (const c of clients) {
      const [, change] = c.frames;
      expect(change!.event).toBe("changes");
      expect(change!.data).toEqual([JSON.parse(JSON.stringify(stored))]);
      expect(change!.bytes).toBeLessThan(2_000);
    }
    // What the change cost: its history record and its entry, not the board.
    expect(changeReads.rows).toBeLessThanOrEqual(2);

    await board.transition("Human", "new-1", "canceled");
    await Promise.all(clients.map((c) => c.until((f) => f.length > 2)));
    const settled = reads.statements;
    await until(() => reads.statements >= settled + 3, "three more polls");
    for (const c of clients) {
      expect(c.frames.map((f) => f.event)).toEqual(["entries", "changes", "changes"]);
      expect(c.frames[2]!.data).toMatchObject([{ entry: { id: "new-1", status: "canceled" }, version: 2 }]);
      expect(Number(c.frames[2]!.id)).toBeGreaterThan(Number(c.frames[1]!.id));
    }
  });

  it("a client that connects later gets the board as it is now", async () => {
    const late = await watchSse(`${s.url}/v1/entries/stream`, { authorization: `Bearer ${TOKENS.Human}` });
    try {
      const [first] = await late.until((f) => f.length > 0);
      const list = first!.data as StoredEntry[];
      expect(list.length).toBe(BOARD + 1);
      expect(list.at(-1)).toMatchObject({ entry: { id: "new-1", status: "canceled" }, version: 2 });
      expect(first!.id).toBe(clients[0]!.frames[2]!.id);
    } finally {
      late.close();
    }
  });
});
