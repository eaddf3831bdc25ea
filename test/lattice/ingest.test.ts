import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redactor } from "../../src/core/index.js";
import { RunIngestor, RunStore } from "../../src/lattice/index.js";
import { availableStoreKinds } from "../helpers/stores.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("RunIngestor on $name", (kind) => {
  it("writes nothing after finish(): a resume's reset of the stream offsets is not overwritten by the finished attempt", async () => {
    const ts = await kind.open();
    const dir = mkdtempSync(join(tmpdir(), "pmagent-ingest-"));
    try {
      const runs = new RunStore(ts.store, "demo");
      const run = await runs.create({ id: "run_1", project_id: "demo", role: "Builder", entry_id: null, sprite_id: "s", work_item_id: "w", command: ["x"], workspace: dir, checkpoint_dir: dir, run_dir: dir, worker: null, host: "h", supervisor_pid: 1, gate: null });
      const ingestor = new RunIngestor({
        store: ts.store, runId: run.id, attempt: 1, outboxPath: join(dir, "outbox.jsonl"), violationsPath: join(dir, "violations.log"),
        outbox: run.outbox, stdoutOffset: 0, stderrOffset: 0, logBytes: 0, logTruncated: false, redactor: new Redactor(),
      });
      // The last chunk is pushed right before finish(), as the supervisor's drain does: it schedules a flush of its own.
      ingestor.pushStdout(Buffer.from("one\ntwo\n"));
      await ingestor.finish();
      expect((await runs.get(run.id)).stdout_offset).toBe(8);
      // The next attempt starts (what resumeRun does), then anything left scheduled gets its chance to run.
      await runs.update(run.id, { attempt: 2, resetStreams: true });
      await new Promise((r) => setImmediate(r));
      await ingestor.settle();
      expect((await runs.get(run.id)).stdout_offset).toBe(0);
      expect((await runs.logs(run.id)).map((l) => l.text)).toEqual(["one", "two"]);
    } finally {
      await ts.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
