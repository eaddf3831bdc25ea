import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Blackboard, BoardFeed, type StoredEntry } from "../../src/blackboard/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";

/** A watcher that keeps what it is handed, with a way to wait for it. */
function recorder() {
  const changes: Array<{ ids: string[]; seq: number }> = [];
  let wake = () => {};
  return {
    changes,
    watcher: {
      changed(entries: StoredEntry[], seq: number) {
        changes.push({ ids: entries.map((e) => `${e.entry.id}@${e.version}`), seq });
        wake();
      },
      ended: () => undefined,
    },
    /** Every entry version handed over, in order (one poll may hand over several). */
    versions: () => changes.flatMap((c) => c.ids),
    /** Resolve once `n` entry versions have arrived; fail after 10 s (a guard, not a measurement). */
    async count(n: number): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (changes.flatMap((c) => c.ids).length < n) {
        if (Date.now() > deadline)
          throw new Error(`only ${JSON.stringify(changes)} within 10 s, not ${n} entry versions`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

describe.each(await availableStoreKinds())("BoardFeed ($name)", (kind) => {
  let ts: TestStore;
  let board: Blackboard;
  let feed: BoardFeed;
  beforeEach(async () => {
    ts = await kind.open();
    board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    feed = new BoardFeed(board, { pollMs: 10 });
  });
  afterEach(async () => {
    feed.close();
    await ts.cleanup();
  });

  it("hands a watcher the board, then each new version once; a lease renewal and other projects are not changes", async () => {
    await board.post("Human", { id: "a", to: "Builder", kind: "build_request" });
    const r = recorder();
    const watch = await feed.watch(r.watcher);
    expect(watch.entries.map((e) => e.entry.id)).toEqual(["a"]);
    await board.post("Human", { id: "b", to: "Builder", kind: "build_request" });
    await r.count(1);
    const claimed = await board.claim("w1", "Builder", ["build_request"]);
    await board.heartbeat("w1", claimed!.entry.id);
    await new Blackboard(ts.store, { projectId: "other", humans: ["Human"] }).post("Human", {
      id: "x",
      to: "Builder",
      kind: "build_request",
    });
    await board.transition("Human", "b", "canceled");
    await r.count(3);
    expect(r.versions()).toEqual(["b@1", "a@2", "b@2"]);
    expect(r.changes.map((c) => c.seq)).toEqual([...r.changes.map((c) => c.seq)].sort((x, y) => x - y));
    // A second watcher starts from the board as it is now, at the same position.
    const later = await feed.watch(recorder().watcher);
    expect(later.entries.map((e) => `${e.entry.id}@${e.version}`)).toEqual(["a@2", "b@2"]);
    expect(later.seq).toBe(r.changes.at(-1)!.seq);
  });

  it.runIf(kind.name === "postgres")(
    "finds a change whose history record commits after a later one (seq handed out before commit)",
    async () => {
      await board.post("Human", { id: "slow", to: "Builder", kind: "build_request" });
      const r = recorder();
      await feed.watch(r.watcher);
      let commit!: () => void;
      const go = new Promise<void>((resolve) => (commit = resolve));
      // This transaction takes its seq now and commits only after another write has been seen.
      const held = ts.store.transaction(async (tx) => {
        await tx.run(
          "UPDATE bb_entries SET version = 2, status = 'canceled', updated_ms = updated_ms + 1 WHERE project_id = 'demo' AND id = 'slow'",
        );
        await tx.run(
          "INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json) VALUES ('demo', 'slow', 2, '2026-01-01T00:00:00Z', 0, 'Human', 'status', 'open', 'canceled', '{}')",
        );
        await go;
      });
      await board.post("Human", { id: "fast", to: "Builder", kind: "build_request" });
      await r.count(1);
      commit();
      await held;
      await r.count(2);
      expect(r.versions()).toEqual(["fast@1", "slow@2"]);
    },
  );
});
