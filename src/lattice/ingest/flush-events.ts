/** The events of a flush, as ingest hands them to the runs module to store (see RunOutputWriter). */
import type { NewEvent } from "../runs/index.js";
import { BatchCursor, type OutboxBatch } from "./outbox-reader.js";

/**
 * A flush's events in the order they are stored: its outbox batches' events, then those only
 * stdout delivered. An outbox event's views are made as it is reached, so they are garbage once
 * its chunk is stored instead of living (and being copied by every scavenge) for the whole flush.
 */
export function candidatesOf(batches: readonly OutboxBatch[], fromStdout: readonly NewEvent[]): Iterable<NewEvent> {
  // Each iteration starts over: a transaction that ran its body again would store every event.
  return {
    *[Symbol.iterator]() {
      for (const b of batches) {
        // Views made from the batch's memory directly: half the cost of Buffer#subarray.
        const memory = b.bytes.buffer;
        const base = b.bytes.byteOffset;
        for (const c = new BatchCursor(b); c.next();) {
          yield {
            id: Buffer.from(memory, base + c.id, c.idEnd - c.id),
            type: c.type,
            source: "outbox",
            outbox_line: c.lineNo,
            json: Buffer.from(memory, base + c.json, c.jsonEnd - c.json),
            ts: Buffer.from(memory, base + c.ts, c.tsEnd - c.ts),
          };
        }
      }
      yield* fromStdout;
    },
  };
}
