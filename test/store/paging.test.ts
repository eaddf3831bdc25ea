import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { PmagentError } from "../../src/core/index.js";
import { ActionStore, ProposalStore, RunStore } from "../../src/lattice/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { Redactor } from "../../src/core/index.js";
import type { Page, PageRequest, SqlParam, Store } from "../../src/store/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { newRun } from "../helpers/runs.js";

const kinds = await availableStoreKinds();
const P = "proj";
/** Rows per list: enough that a full scan is dearer than the index on PostgreSQL after ANALYZE. */
const ROWS = 200;

/** The real store, with the SQL of its `all` calls kept (to ask each dialect for the plan of a list's query). */
function recording(store: Store): { store: Store; last(): { sql: string; params: SqlParam[] } } {
  const seen: Array<{ sql: string; params: SqlParam[] }> = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === "all") {
        return (sql: string, params: SqlParam[] = []) => {
          seen.push({ sql, params });
          return target.all(sql, params);
        };
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    store: proxy,
    last: () =>
      seen.filter((s) => / LIMIT \d+$/.test(s.sql))[seen.filter((s) => / LIMIT \d+$/.test(s.sql)).length - 1]!,
  };
}

/** The plan's text: SQLite's EXPLAIN QUERY PLAN details, or PostgreSQL's EXPLAIN with sequential scans and sorts priced out. */
async function plan(store: Store, q: { sql: string; params: SqlParam[] }): Promise<string> {
  if (store.dialect === "sqlite") {
    const rows = await store.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${q.sql}`, q.params);
    return rows.map((r) => r.detail).join("\n");
  }
  return store.transaction(async (tx) => {
    // Not to force the index (it is the only way left), but to check it is usable in the list's order:
    // a plan with no usable index shows Seq Scan or Sort whatever they cost.
    await tx.exec("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off");
    const rows = await tx.all<{ "QUERY PLAN": string }>(`EXPLAIN ${q.sql}`, q.params);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}

function expectIndexed(store: Store, text: string): void {
  if (store.dialect === "sqlite") {
    expect(text, text).not.toMatch(/TEMP B-TREE/);
    for (const line of text.split("\n").filter((l) => /^(SCAN|SEARCH) /.test(l)))
      expect(line, text).toMatch(/USING (COVERING )?INDEX|USING (INTEGER )?PRIMARY KEY/);
  } else {
    expect(text, text).not.toMatch(/Seq Scan|Sort/);
    expect(text, text).toMatch(/Index (Only )?Scan/);
  }
}

/** Every page of a list, following `next`, with `between` run after each page. */
async function walk<T>(
  read: (r: PageRequest) => Promise<Page<T>>,
  request: PageRequest,
  between: (n: number) => Promise<void> = async () => {},
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 1000; n++) {
    const p = await read({ ...request, cursor });
    out.push(...p.items);
    if (p.next === null) return out;
    cursor = p.next;
    await between(n);
  }
  throw new Error("no last page");
}

async function refused(p: Promise<unknown>): Promise<PmagentError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PmagentError);
  return err as PmagentError;
}

describe.each(kinds)("paged lists ($name)", (kind) => {
  let t: TestStore;
  let rec: ReturnType<typeof recording>;
  let board: Blackboard;
  let runs: RunStore;
  let ms = Date.UTC(2026, 0, 1);

  // One store for the file, seeded once under project P; the tests that write use projects of their own.
  beforeAll(async () => {
    t = await kind.open();
    rec = recording(t.store);
    board = new Blackboard(rec.store, { projectId: P, humans: ["Human"], clock: () => (ms += 7) });
    runs = new RunStore(rec.store, P, () => (ms += 7));
    await seed();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  async function seed(): Promise<void> {
    const s = t.store;
    await s.transaction(async (tx) => {
      for (let i = 0; i < ROWS; i++) {
        const id = `e-${String(i).padStart(4, "0")}`;
        const created = Date.UTC(2026, 0, 1) + i * 1000;
        const status = ["open", "in_progress", "done"][i % 3]!;
        await tx.run(
          `INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, entry_json, content_hash, updated_at)
           VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, 'h', ?)`,
          [
            P,
            id,
            status,
            i % 2 ? "Human" : "Aya",
            ["Aya", "Hana", "Sho"][i % 3]!,
            i % 4 ? "build_request" : "review_request",
            created,
            created,
            JSON.stringify({
              id,
              from: "Human",
              to: "Aya",
              project_id: P,
              kind: "build_request",
              payload: {},
              created_at: new Date(created).toISOString(),
            }),
            new Date(created).toISOString(),
          ],
        );
        await tx.run(
          `INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json) VALUES (?, ?, 1, ?, ?, 'Human', 'post', NULL, 'open', '{}')`,
          [i % 2 ? P : "other", i % 10 === 1 ? "e-0000" : id, new Date(created).toISOString(), created],
        );
        const run = `r-${String(i).padStart(4, "0")}`;
        await tx.run(
          `INSERT INTO lattice_runs (id, project_id, role, entry_id, sprite_id, work_item_id, state, command_json, workspace, checkpoint_dir, run_dir, host, attempt, outbox_offset, outbox_line,
             stdout_offset, stderr_offset, log_bytes, log_truncated, entry_synced, created_at, created_ms, updated_ms)
           VALUES (?, ?, ?, ?, 's', 'w', ?, '[]', '/w', '/c', '/r', 'h', 1, 0, 1, 0, 0, 0, 0, 0, ?, ?, ?)`,
          [
            run,
            P,
            ["Aya", "Hana"][i % 2]!,
            `e-${String(i % 50).padStart(4, "0")}`,
            ["running", "succeeded", "failed"][i % 3]!,
            new Date(created).toISOString(),
            created,
            created,
          ],
        );
        await tx.run(
          `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts) VALUES ('r-0000', ?, 1, ?, ?, 'outbox', ?, '{}', ?, '')`,
          [i + 1, `ev-${i}`, i % 5 ? "INFO" : "ACTION_REQUEST", i + 1, created],
        );
        await tx.run(
          `INSERT INTO lattice_actions (idempotency_key, project_id, run_id, event_hash, role, work_item_id, action, parameters_json, blocking, state, next_attempt_at, next_attempt_ms, created_at, created_ms, updated_at, updated_ms)
           VALUES (?, ?, ?, 'h', 'Aya', 'w', 'OPEN_PR', '{}', 0, ?, '', 0, '', ?, '', ?)`,
          [
            `k-${String(i).padStart(4, "0")}`,
            P,
            `r-${String(i % 20).padStart(4, "0")}`,
            ["pending", "succeeded"][i % 2]!,
            created,
            created,
          ],
        );
        await tx.run(
          `INSERT INTO lattice_env_proposals (id, project_id, role, fingerprint, adjustment_type, details_json, observed_failure_json, confidence, evidence_json, scope, count, status,
             first_run_id, last_run_id, first_seen_at, last_seen_at, last_seen_ms) VALUES (?, ?, ?, ?, 'preinstall_package', '{}', '{}', 0.5, '[]', 'role', 1, ?, 'r', 'r', '', '', ?)`,
          [
            `p-${String(i).padStart(4, "0")}`,
            P,
            ["Aya", "Hana"][i % 2]!,
            `f-${i}`,
            ["pending", "accepted", "rejected"][i % 3]!,
            created,
          ],
        );
        await tx.run(
          `INSERT INTO lattice_forge_pulls (project_id, number, head, base, title, body, head_sha, state, created_at, created_ms) VALUES (?, ?, 'h', 'main', 't', '', 's', ?, '', ?)`,
          [P, i + 1, ["open", "merged"][i % 2]!, created],
        );
      }
    });
    await s.exec("ANALYZE");
  }

  const actions = () => new ActionStore(rec.store, new Redactor());
  const proposals = () => new ProposalStore({ store: rec.store, projectId: P, humans: ["Human"] });
  const forge = () => new LocalForge({ store: rec.store, projectId: P, root: "/nonexistent", bareRepo: "forge.git" });

  /** Each list the API offers, with each of its filters: the query of a first and of a later page. */
  const lists: Array<[string, (r: PageRequest) => Promise<Page<unknown>>]> = [
    ["entries", (r) => board.page({}, r)],
    ["entries by status", (r) => board.page({ status: "open" }, r)],
    ["entries in progress", (r) => board.page({ status: "in_progress" }, r)],
    ["finished entries", (r) => board.page({ status: "done" }, r)],
    ["entries by addressee", (r) => board.page({ to: "Hana" }, r)],
    ["entries by author", (r) => board.page({ from: "Aya" }, r)],
    ["entries by kind", (r) => board.page({ kind: "review_request" }, r)],
    ["entries by addressee and status", (r) => board.page({ to: "Hana", status: "in_progress" }, r)],
    ["an entry's history", (r) => board.historyPage("e-0000", r)],
    ["the project's history", (r) => board.historyPage(undefined, r)],
    ["runs", (r) => runs.page({}, r)],
    ["runs by state", (r) => runs.page({ state: "running" }, r)],
    ["runs by role", (r) => runs.page({ role: "Hana" }, r)],
    ["runs of an entry", (r) => runs.page({ entryId: "e-0007" }, r)],
    ["a run's events", (r) => runs.eventsPage("r-0000", {}, r)],
    ["a run's events of an indexed type", (r) => runs.eventsPage("r-0000", { type: "ACTION_REQUEST" }, r)],
    ["a run's events of a narration type", (r) => runs.eventsPage("r-0000", { type: "INFO" }, r)],
    ["actions", (r) => actions().page(P, {}, r)],
    ["actions by state", (r) => actions().page(P, { state: "pending" }, r)],
    ["actions of a run", (r) => actions().page(P, { runId: "r-0003" }, r)],
    ["proposals", (r) => proposals().page({}, r)],
    ["proposals by status", (r) => proposals().page({ status: "pending" }, r)],
    ["proposals by role", (r) => proposals().page({ role: "Hana" }, r)],
    ["pull requests", (r) => forge().page({}, r)],
    ["pull requests by state", (r) => forge().page({ state: "merged" }, r)],
  ];

  it.each(lists)("%s: every page is read from an index in the list's order, both ways", async (_name, read) => {
    for (const order of ["newest", "oldest"] as const) {
      const first = await read({ order, limit: 5 });
      expectIndexed(t.store, await plan(t.store, rec.last()));
      expect(first.items.length).toBeGreaterThan(0);
      if (first.next === null) continue;
      await read({ order, limit: 5, cursor: first.next });
      expectIndexed(t.store, await plan(t.store, rec.last()));
    }
  });

  it.each(lists)("%s: the pages hold every item once, in order, and newest is oldest reversed", async (_name, read) => {
    const oldest = await walk(read, { order: "oldest", limit: 7 });
    const newest = await walk(read, { order: "newest", limit: 7 });
    expect(new Set(oldest.map((x) => JSON.stringify(x))).size).toBe(oldest.length);
    expect(newest.map((x) => JSON.stringify(x))).toEqual([...oldest].reverse().map((x) => JSON.stringify(x)));
    expect(oldest.length).toBeGreaterThan(0);
  });

  it("entries posted between pages: none repeated or skipped, and oldest-first reaches the new ones", async () => {
    const board = new Blackboard(t.store, { projectId: "posting", humans: ["Human"], clock: () => (ms += 7) });
    for (let i = 0; i < 40; i++)
      await board.post("Human", { id: `a-${String(i).padStart(3, "0")}`, to: "Aya", kind: "build_request" });
    let added = 0;
    const add = async () => {
      for (let k = 0; k < 3; k++)
        await board.post("Human", { id: `b-${String(added++).padStart(3, "0")}`, to: "Aya", kind: "build_request" });
    };
    const oldest = (await walk((r) => board.page({ to: "Aya" }, r), { order: "oldest", limit: 6 }, add)).map(
      (s) => s.entry.id,
    );
    expect(new Set(oldest).size).toBe(oldest.length);
    // Every entry there was at the start and every one added before the last page, each once, in creation order.
    const all = (await walk((r) => board.page({ to: "Aya" }, r), { order: "oldest", limit: 500 })).map(
      (s) => s.entry.id,
    );
    expect(oldest).toEqual(all);
    const newest = (await walk((r) => board.page({}, r), { order: "newest", limit: 6 }, add)).map((s) => s.entry.id);
    expect(new Set(newest).size).toBe(newest.length);
    // Newest first: every entry there was at the start, each once, newest first; those added meanwhile are ahead of the cursor.
    expect(newest).toEqual([...all].reverse());
  });

  it("runs created between pages: each once", async () => {
    const runs = new RunStore(t.store, "creating", () => (ms += 7));
    const make = (id: string) =>
      runs.create(newRun(id, "/w", { project_id: "creating", role: "Aya", checkpoint_dir: "/c", run_dir: "/r" }));
    for (let i = 0; i < 20; i++) await make(`a-${String(i).padStart(3, "0")}`);
    let added = 0;
    const seen = (
      await walk(
        (r) => runs.page({}, r),
        { order: "oldest", limit: 4 },
        async () => void (await make(`b-${String(added++).padStart(3, "0")}`)),
      )
    ).map((r) => r.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual((await walk((r) => runs.page({}, r), { limit: 500 })).map((r) => r.id));
    expect(seen).toHaveLength(20 + added);
  });

  it("refuses a cursor it did not give, of another list or of the other order, and a bad limit, saying what to pass", async () => {
    const next = (await board.page({}, { limit: 1 })).next!;
    expect(next).toEqual(expect.any(String));
    for (const bad of [
      "nonsense!",
      "abc",
      Buffer.from("[1,2]").toString("base64url"),
      Buffer.from('["entries","o","x","y"]').toString("base64url"),
    ]) {
      const e = await refused(board.page({}, { cursor: bad }));
      expect(e.code).toBe("invalid_cursor");
      expect(e.message).toMatch(/pass the `next` of the previous page unchanged/);
    }
    expect((await refused(board.page({}, { cursor: next, order: "newest" }))).message).toMatch(
      /it was given for order=oldest/,
    );
    expect((await refused(runs.page({}, { cursor: next }))).message).toMatch(/a cursor of another list/);
    const e = await refused(board.page({}, { limit: 501 }));
    expect(e.code).toBe("invalid_limit");
    expect(e.message).toBe("limit must be a whole number from 1 to 500, got 501");
  });
});
