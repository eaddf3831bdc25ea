import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPmagentError } from "../../src/core/index.js";
import { SqliteStore, waitingAtMost } from "../../src/store/index.js";
import { holdWriteLock } from "../helpers/sqlite-lock.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";

const BUSY =
  /^the SQLite database \S+ is locked by another process's write \(waited \d+ ms for it\): nothing was written; try again in a moment$/;

describe("SQLite while another process holds the write lock", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    await ts.store.exec("CREATE TABLE busy_probe (k TEXT PRIMARY KEY)");
  });
  afterAll(async () => ts?.cleanup());

  it("a blocking store (workers, runs) waits its busy timeout in SQLite, then fails with store_busy", async () => {
    const store = new SqliteStore(ts.file!, { busyTimeoutMs: 50 });
    const lock = await holdWriteLock(ts.file!);
    try {
      const err = await store.run("INSERT INTO busy_probe (k) VALUES ('a')").catch((e: unknown) => e);
      expect(isPmagentError(err) && err.toJSON()).toEqual({
        code: "store_busy",
        message: expect.stringMatching(BUSY),
        details: { retry_after_s: 1 },
      });
      await expect(
        store.transaction(async (tx) => tx.run("INSERT INTO busy_probe (k) VALUES ('b')")),
      ).rejects.toMatchObject({ code: "store_busy", kind: "unavailable" });
    } finally {
      await lock.release();
      await store.close();
    }
  });

  it("a yielding store (serve) reads while its write waits, and the write goes through once the lock is free", async () => {
    const store = new SqliteStore(ts.file!, { yieldWhileBusy: true });
    const lock = await holdWriteLock(ts.file!);
    try {
      const order: string[] = [];
      const write = store
        .transaction(async (tx) => tx.run("INSERT INTO busy_probe (k) VALUES ('c')"))
        .then(() => order.push("write"));
      const single = store.run("INSERT INTO busy_probe (k) VALUES ('d')").then(() => order.push("single"));
      expect(await store.get("SELECT count(*) AS n FROM busy_probe")).toEqual({ n: 0 });
      order.push("read");
      await lock.release();
      await Promise.all([write, single]);
      expect(order).toEqual(["read", "write", "single"]);
      expect(await store.all("SELECT k FROM busy_probe ORDER BY k")).toEqual([{ k: "c" }, { k: "d" }]);
    } finally {
      await store.close();
    }
  });

  it("a yielding store's write inside waitingAtMost gives up after that long; work that outlives the scope waits the store's timeout", async () => {
    const store = new SqliteStore(ts.file!, { yieldWhileBusy: true });
    const lock = await holdWriteLock(ts.file!);
    try {
      let go!: () => void;
      const ended = new Promise<void>((resolve) => (go = resolve));
      let later!: Promise<unknown>;
      const err = await waitingAtMost(50, async () => {
        // Started inside the scope, writing after it has ended (as a resumed run goes on after its response).
        later = ended.then(() => store.run("INSERT INTO busy_probe (k) VALUES ('late')"));
        return store.run("INSERT INTO busy_probe (k) VALUES ('e')");
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "store_busy", message: expect.stringMatching(BUSY) });
      let settled = false;
      void later.finally(() => (settled = true));
      go();
      // Well past the scope's 50 ms the late write is still waiting (and reads go on meanwhile).
      const since = Date.now();
      while (Date.now() - since < 250) {
        await store.get("SELECT 1");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(settled).toBe(false);
      await lock.release();
      await later;
      expect(await store.all("SELECT k FROM busy_probe WHERE k IN ('e', 'late') ORDER BY k")).toEqual([{ k: "late" }]);
    } finally {
      await store.close();
    }
  });
});
