#!/usr/bin/env node
// Benchmark sprite: writes N mixed protocol events to the outbox and to stdout (both, as the spec
// requires), in large buffered writes so the sprite itself is not the bottleneck, then COMPLETED.
import { closeSync, fsyncSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

const n = Number(process.argv[2] ?? 1_000_000);
const ws = process.env.LATTICE_WORKSPACE;
mkdirSync(join(ws, ".lattice"), { recursive: true });
const outbox = openSync(join(ws, ".lattice", "outbox.jsonl"), "a");
const base = {
  protocol_version: "v1",
  sprite_id: process.env.LATTICE_SPRITE_ID,
  work_item_id: process.env.LATTICE_WORK_ITEM_ID,
};
const t0 = Date.parse("2026-01-15T10:30:00Z");

// Each line is written from a template, not built as an object and JSON.stringify-ed: the bytes
// are the same as JSON.stringify's (see eventJson's check below), at a fraction of the CPU, which on
// a small machine the sprite would otherwise take from the supervisor it is measuring.
const head = JSON.stringify(base).slice(0, -1);
export function eventJson(i) {
  const timestamp = new Date(t0 + i).toISOString();
  const r = i % 10;
  if (r < 7)
    return `${head},"event_type":"INFO","timestamp":"${timestamp}","payload":{"message":"step ${i} done","kind":"progress","metadata":{"i":${i},"percent":${i % 100}}}}`;
  if (r === 7)
    return `${head},"event_type":"PHASE_STARTED","timestamp":"${timestamp}","payload":{"phase":"phase-${i}"}}`;
  if (r === 8)
    return `${head},"event_type":"PHASE_FINISHED","timestamp":"${timestamp}","payload":{"phase":"phase-${i}","success":true}}`;
  return `${head},"event_type":"ARTIFACT","timestamp":"${timestamp}","payload":{"kind":"file","ref":"out/${i}.txt","url":null,"metadata":{}}}`;
}

function event(i) {
  const timestamp = new Date(t0 + i).toISOString();
  const r = i % 10;
  if (r < 7)
    return {
      ...base,
      event_type: "INFO",
      timestamp,
      payload: { message: `step ${i} done`, kind: "progress", metadata: { i, percent: i % 100 } },
    };
  if (r === 7) return { ...base, event_type: "PHASE_STARTED", timestamp, payload: { phase: `phase-${i}` } };
  if (r === 8)
    return { ...base, event_type: "PHASE_FINISHED", timestamp, payload: { phase: `phase-${i}`, success: true } };
  return {
    ...base,
    event_type: "ARTIFACT",
    timestamp,
    payload: { kind: "file", ref: `out/${i}.txt`, url: null, metadata: {} },
  };
}
// The template must write exactly what JSON.stringify would: checked on every kind of line.
for (let i = 0; i < 10; i++)
  if (eventJson(i) !== JSON.stringify(event(i)))
    throw new Error(`bench sprite: template line ${i} differs from JSON.stringify`);

// Lines are encoded into two buffers allocated once and reused for every chunk: a string per chunk
// handed to writeSync would be encoded into a fresh buffer each time, whose first touch (page
// faults) cost the sprite more than building the lines.
const CHUNK = 5000;
const PREFIX = "LATTICE_EVENT ";
const boxBuf = Buffer.allocUnsafeSlow(CHUNK * 1024);
const outBuf = Buffer.allocUnsafeSlow(CHUNK * 1024);
for (let start = 0; start <= n; start += CHUNK) {
  let box = 0;
  let out = 0;
  for (let i = start; i < Math.min(start + CHUNK, n + 1); i++) {
    const json =
      i === n
        ? JSON.stringify({
            ...base,
            event_type: "COMPLETED",
            timestamp: new Date(t0 + i).toISOString(),
            payload: { status: "success", summary: `${n} events` },
          })
        : eventJson(i);
    const line = `${json}\n`;
    box += boxBuf.write(line, box);
    out += outBuf.write(PREFIX, out);
    out += outBuf.write(line, out);
  }
  writeSync(outbox, boxBuf, 0, box); // outbox first: durable before it is shown
  writeSync(1, outBuf, 0, out);
}
fsyncSync(outbox);
closeSync(outbox);
// Its own CPU, for the bench to read: in a sandbox (its own PID namespace) the supervisor's
// waited-for-children figure does not include it.
const used = process.cpuUsage();
writeFileSync(join(ws, "bench-sprite-cpu.json"), JSON.stringify({ seconds: (used.user + used.system) / 1e6 }));
