import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/index.js";
import { holdWriteLock } from "../helpers/sqlite-lock.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "./helpers.js";

describe("pmagent serve while another process holds the SQLite write lock", () => {
  let ts: TestStore;
  let serving: TestStore;
  let s: TestServer;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    // The server's own connection, as `pmagent serve` opens it.
    serving = {
      ...ts,
      store: new SqliteStore(ts.file!, { yieldWhileBusy: true }),
      cleanup: async () => serving.store.close(),
    };
    s = await startServer(serving);
    expect(
      (await s.call("POST", "/v1/entries", { body: { id: "e-1", to: "Builder", kind: "build_request" } })).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await s?.close();
    await serving?.cleanup();
    await ts?.cleanup();
  });

  it("answers reads at once, a write 503 store_busy with Retry-After, and the write once the lock is free", async () => {
    const lock = await holdWriteLock(ts.file!);
    let released = false;
    try {
      const answered: string[] = [];
      const received = new Promise<void>((resolve) => s.server.app.server.once("request", () => resolve()));
      const post = fetch(`${s.url}/v1/entries`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKENS.Human}`, "content-type": "application/json" },
        body: JSON.stringify({ id: "e-2", to: "Builder", kind: "build_request" }),
      }).then(async (r) => {
        answered.push("POST");
        return {
          status: r.status,
          retryAfter: r.headers.get("retry-after"),
          body: (await r.json()) as { error: { code: string; message: string } },
        };
      });
      // Once the write is in, every read is answered while it waits for the lock (the event loop is never held).
      await received;
      const reads = await Promise.all(
        ["/v1/whoami", "/v1/entries", "/v1/entries/e-1", "/v1/runs", "/v1/inbox"].map((path) =>
          s.call("GET", path).then((r) => {
            answered.push(path);
            return [path, r.status];
          }),
        ),
      );
      expect(reads.map(([, status]) => status)).toEqual([200, 200, 200, 200, 200]);
      const refused = await post;
      expect(answered.at(-1)).toBe("POST");
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe("1");
      expect(refused.body.error.code).toBe("store_busy");
      expect(refused.body.error.message).toMatch(
        /^the SQLite database \S+pmagent\.db is locked by another process's write \(waited \d+ ms for it\): nothing was written; try again in a moment$/,
      );
      await lock.release();
      released = true;
      expect(
        (await s.call("POST", "/v1/entries", { body: { id: "e-2", to: "Builder", kind: "build_request" } })).status,
      ).toBe(201);
    } finally {
      if (!released) await lock.release();
    }
  });
});
