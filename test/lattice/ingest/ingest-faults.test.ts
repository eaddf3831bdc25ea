/**
 * The ingestor through store faults: the run's saved position moves only with the commit that
 * stores what was read. A failed flush is tried again as it is (from the last committed state);
 * one the fault outlasts stops the ingestor with the position where it was, and a new ingestor
 * from the saved state (what `pmagent runs reconcile` starts) stores the rest, each event once.
 * The fault on SQLite is a real "database or disk is full": the connection's max_page_count at
 * the pages the file has.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redactor, type PmagentError } from "../../../src/core/index.js";
import {
  eventId,
  INGEST_STORE_FAULT,
  readOutbox,
  RunIngestor,
  RunStore,
  type IngestOptions,
  type RunRecord,
  type StoredEvent,
} from "../../../src/lattice/index.js";
import type { Store } from "../../../src/store/index.js";
import { availableStoreKinds, openSqliteTestStore, type TestStore } from "../../helpers/stores.js";
import { SPEC_EVENTS } from "../helpers.js";
import { newRun } from "../../helpers/runs.js";

const RUNS = Math.max(10, Math.floor(Number(process.env.PMAGENT_CHAOS_RUNS ?? 100) / 10));
const NO_LIMIT = 1_073_741_823;

/** The store refuses to grow (SQLite: "database or disk is full") until `clear`. */
async function fillDisk(store: Store): Promise<void> {
  const { page_count } = (await store.get<{ page_count: number }>("PRAGMA page_count"))!;
  await store.exec(`PRAGMA max_page_count = ${page_count}`);
}
const clearDisk = (store: Store) => store.exec(`PRAGMA max_page_count = ${NO_LIMIT}`);

/** A run in `root` whose outbox and stdout the test writes, and the ingestors that store them. */
class FaultRun {
  readonly dir: string;
  readonly outbox: string;
  private stdout = Buffer.alloc(0);
  private n = 0;
  constructor(
    readonly ts: TestStore,
    readonly runs: RunStore,
    readonly id: string,
    root: string,
  ) {
    this.dir = join(root, id);
    this.outbox = join(this.dir, "outbox.jsonl");
    mkdirSync(this.dir, { recursive: true });
  }

  create(): Promise<RunRecord> {
    return this.runs.create(newRun(this.id, this.dir));
  }

  /** `count` events written as a sprite writes them (outbox, then stdout), a log line after each tenth; the new stdout bytes. */
  write(count: number): Buffer {
    const first = this.n;
    this.n += count;
    const events = Array.from({ length: count }, (_, i) => ({
      ...SPEC_EVENTS.info,
      payload: { message: `${this.id} event ${first + i}` },
    }));
    appendFileSync(this.outbox, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const out = Buffer.from(
      events
        .map((e, i) => `LATTICE_EVENT ${JSON.stringify(e)}\n${(first + i) % 10 === 9 ? `log ${first + i + 1}\n` : ""}`)
        .join(""),
    );
    this.stdout = Buffer.concat([this.stdout, out]);
    return out;
  }

  /** An ingestor from what the run's row saved (as the supervisor's follow starts one), given stdout from there. */
  async ingestor(more: Partial<IngestOptions> = {}): Promise<RunIngestor> {
    const run = await this.runs.get(this.id);
    const ing = new RunIngestor({
      store: this.ts.store,
      runId: this.id,
      attempt: 1,
      outboxPath: this.outbox,
      violationsPath: join(this.dir, "violations.log"),
      outbox: run.outbox,
      stdoutOffset: run.stdout_offset,
      stderrOffset: run.stderr_offset,
      logBytes: run.log_bytes,
      logTruncated: run.log_truncated,
      redactor: new Redactor(),
      retries: { attempts: 2, firstDelayMs: 0 },
      ...more,
    });
    if (run.stdout_offset < this.stdout.length) ing.pushStdout(this.stdout.subarray(run.stdout_offset));
    return ing;
  }

  /** The outbox's event ids, in order (line i + 1 is index i). */
  outboxIds(): string[] {
    return readOutbox(this.outbox).items.map((i) => (i.kind === "event" ? i.id : "?"));
  }

  /** What is wrong with what is stored: a hole below the saved position, a double, an event not in the outbox. */
  async problems(): Promise<string[]> {
    const run = await this.runs.get(this.id);
    const outbox = this.outboxIds();
    const stored = (await this.runs.events(this.id)).map((e) => e.id);
    const have = new Set(stored);
    const problems: string[] = [];
    const below = outbox.slice(0, run.outbox.line_no - 1).filter((id) => !have.has(id)).length;
    if (below > 0)
      problems.push(`${below} outbox events before the saved position (line ${run.outbox.line_no}) are not stored`);
    if (have.size !== stored.length) problems.push(`${stored.length - have.size} events stored twice`);
    const known = new Set(outbox);
    if (stored.some((id) => !known.has(id))) problems.push("an event not in the outbox is stored");
    return problems;
  }
}

describe("RunIngestor through a full disk (SQLite)", () => {
  let ts: TestStore;
  let root: string;
  let runs: RunStore;
  let n = 0;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    root = mkdtempSync(join(tmpdir(), "pmagent-ingest-faults-"));
    runs = new RunStore(ts.store, "demo");
  });
  afterAll(async () => {
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });
  const newRun = async () => {
    const r = new FaultRun(ts, runs, `run_${++n}`, root);
    await r.create();
    return r;
  };

  it("never saves a position past a flush that was not stored; a new ingestor from the saved state stores the rest, each event once", async () => {
    const step = fc.record({ events: fc.integer({ min: 1, max: 300 }), full: fc.boolean() });
    let stops = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        const r = await newRun();
        let ing = await r.ingestor();
        let stopped = 0;
        try {
          for (const s of steps) {
            if (s.full) await fillDisk(ts.store);
            ing.pushStdout(r.write(s.events));
            await ing.poll();
            if (s.full) {
              // The space comes back; the supervisor's timer polls on.
              await clearDisk(ts.store);
              await ing.poll();
            }
            expect(await r.problems()).toEqual([]);
            const failed = await ing.settle().then(
              () => null,
              (err: PmagentError) => err,
            );
            if (failed) {
              // Stopped by the fault: reported, and what reconcile does brings the rest in.
              expect(failed.code).toBe(INGEST_STORE_FAULT);
              expect(failed.message).toMatch(/^disk full while storing events: database or disk is full; /);
              stopped++;
              ing = await r.ingestor();
            }
          }
          await ing.finish();
          expect(await r.problems()).toEqual([]);
          expect((await runs.events(r.id)).map((e) => e.id)).toEqual(r.outboxIds());
          expect((await runs.get(r.id)).outbox.line_no).toBe(r.outboxIds().length + 1);
          expect(stopped).toBeLessThanOrEqual(steps.filter((s) => s.full).length);
          stops += stopped;
        } finally {
          await clearDisk(ts.store);
        }
      }),
      { numRuns: RUNS },
    );
    // The faults did stop ingestors (the property was not met by flushes that all fitted).
    expect(stops).toBeGreaterThan(0);
  });

  it("tries a failed flush again from the last committed state: the space comes back between tries and every event is stored once, nothing left", async () => {
    const r = await newRun();
    const retried: number[] = [];
    const ing = await r.ingestor({
      retries: {
        attempts: 3,
        firstDelayMs: 0,
        onRetry: (_err, attempt) => (retried.push(attempt), void clearDisk(ts.store)),
      },
    });
    ing.pushStdout(r.write(50));
    await ing.poll();
    await fillDisk(ts.store);
    ing.pushStdout(r.write(500));
    await ing.finish();
    expect(retried).toEqual([1]);
    expect((await runs.events(r.id)).map((e) => e.id)).toEqual(r.outboxIds());
    expect(ing.stored).toBe(550);
    // The log lines went in once too (the failed try's numbering was not kept).
    expect((await runs.logs(r.id)).map((l) => l.text)).toEqual(
      Array.from({ length: 55 }, (_, i) => `log ${(i + 1) * 10}`),
    );
  });

  it("stops when the disk stays full, saying what happened and what brings the rest in, with the position where it was", async () => {
    const r = await newRun();
    const ing = await r.ingestor();
    ing.pushStdout(r.write(40));
    await ing.poll();
    await fillDisk(ts.store);
    try {
      ing.pushStdout(r.write(400));
      const failed = await ing
        .poll()
        .then(() => ing.settle())
        .then(
          () => null,
          (err: PmagentError) => err,
        );
      expect(failed?.code).toBe(INGEST_STORE_FAULT);
      expect(failed?.message).toBe(
        "disk full while storing events: database or disk is full; the events before outbox line 41 are stored: once the fault clears, `pmagent runs reconcile` stores the rest",
      );
      // Stopped: nothing more is stored, even with room again.
      await clearDisk(ts.store);
      await expect(ing.finish()).rejects.toBe(failed);
      const run = await runs.get(r.id);
      expect(run.outbox.line_no).toBe(41);
      expect((await runs.events(r.id)).length).toBe(40);
    } finally {
      await clearDisk(ts.store);
    }
    const again = await r.ingestor();
    await again.finish();
    expect((await runs.events(r.id)).map((e) => e.id)).toEqual(r.outboxIds());
  });
});

const kinds = await availableStoreKinds();

/** `store`, whose next `lose` commits succeed but answer as a lost connection does (the client cannot tell). */
function losingAcks(store: Store, lose: number): Store {
  return {
    dialect: store.dialect,
    location: store.location,
    all: (sql, params) => store.all(sql, params),
    get: (sql, params) => store.get(sql, params),
    run: (sql, params) => store.run(sql, params),
    exec: (sql) => store.exec(sql),
    notify: (channel, payload) => store.notify(channel, payload),
    listen: (channel, handler) => store.listen(channel, handler),
    channelName: (channel) => store.channelName(channel),
    close: () => store.close(),
    async transaction(fn, options) {
      const result = await store.transaction(fn, options);
      if (lose-- > 0) throw new Error("Connection terminated unexpectedly");
      return result;
    },
  };
}

describe.each(kinds)("RunIngestor when a commit's answer is lost, on $name", (kind) => {
  it("finds the flush stored and does not store it again: each event, log line and protocol error once, each new event handed on once", async () => {
    const ts = await kind.open();
    const root = mkdtempSync(join(tmpdir(), "pmagent-ingest-faults-"));
    try {
      const runs = new RunStore(ts.store, "demo");
      const r = new FaultRun(ts, runs, "run_ack", root);
      await r.create();
      const handed: StoredEvent[] = [];
      const ing = await r.ingestor({
        store: losingAcks(ts.store, 1),
        onNewEvents: (events) => void handed.push(...events),
      });
      const out = r.write(30);
      appendFileSync(r.outbox, "not json\n");
      ing.pushStdout(out);
      await ing.finish();
      const ids = r.outboxIds().filter((id) => id !== "?");
      expect((await runs.events(r.id)).map((e) => e.id)).toEqual(ids);
      expect(handed.map((e) => e.id)).toEqual(ids);
      expect(ing.stored).toBe(30);
      expect((await runs.logs(r.id)).map((l) => l.text)).toEqual(["log 10", "log 20", "log 30"]);
      expect((await runs.protocolErrors(r.id)).map((e) => e.line_no)).toEqual([31]);
      expect(ids[0]).toBe(eventId({ ...SPEC_EVENTS.info, payload: { message: "run_ack event 0" } }));
    } finally {
      await ts.cleanup();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
