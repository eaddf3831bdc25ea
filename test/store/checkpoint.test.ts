import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/index.js";
import { storeKinds } from "../helpers/stores.js";

const ROW = "x".repeat(1000);

/** One transaction writing `rows` rows of 1 KB. */
async function bulk(
  store: SqliteStore | Awaited<ReturnType<(typeof storeKinds)[number]["open"]>>["store"],
  from: number,
  rows: number,
  large: boolean,
): Promise<void> {
  await store.transaction(
    async (q) => {
      for (let i = from; i < from + rows; i++) await q.run("INSERT INTO bulk_probe (k, v) VALUES (?, ?)", [i, ROW]);
    },
    { large },
  );
}

describe("SQLite: large transactions are checkpointed on a thread of their own", () => {
  it("keeps the write-ahead log small without checkpointing inside the commits, and closes the thread with the store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-ckpt-"));
    try {
      const file = join(dir, "db.sqlite");
      const store = new SqliteStore(file);
      await store.exec("CREATE TABLE bulk_probe (k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
      expect(
        Number((await store.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint"))!.wal_autocheckpoint),
      ).toBe(1000);
      let walMax = 0;
      // 40 MB in 2 MB transactions, each followed by the thread's checkpoint of it.
      for (let t = 0; t < 20; t++) {
        await bulk(store, t * 2000, 2000, true);
        await store.checkpointed();
        walMax = Math.max(walMax, statSync(`${file}-wal`).size);
      }
      // The store's own connection would checkpoint only past 10,000 pages (40 MB)...
      expect(
        Number((await store.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint"))!.wal_autocheckpoint),
      ).toBe(10_000);
      // ...yet the log was copied into the database and restarted all along.
      expect(walMax).toBeLessThan(12 * 1024 * 1024);
      await store.close();
      const again = new SqliteStore(file);
      expect(Number((await again.get<{ n: number }>("SELECT COUNT(*) AS n FROM bulk_probe"))!.n)).toBe(40_000);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(storeKinds)("store ($name): a transaction marked large", (kind) => {
  it("commits and rolls back like any other", async () => {
    const t = await kind.open();
    try {
      await t.store.exec("CREATE TABLE bulk_probe (k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
      await bulk(t.store, 0, 1500, true);
      await expect(
        t.store.transaction(
          async (q) => {
            await q.run("INSERT INTO bulk_probe (k, v) VALUES (?, ?)", [999_999, ROW]);
            throw new Error("abandoned");
          },
          { large: true },
        ),
      ).rejects.toThrow("abandoned");
      expect(Number((await t.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM bulk_probe"))!.n)).toBe(1500);
    } finally {
      await t.cleanup();
    }
  });
});
