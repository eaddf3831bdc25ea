import { EVENT_PREFIX } from "../protocol/index.js";

/** A stdout event line: the line (without its line end) and, within it, the event's JSON. */
export interface StdoutEvent {
  line: Buffer;
  line_no: number;
}

export const PREFIX = Buffer.from(EVENT_PREFIX);

/**
 * Pairs stdout event lines with the outbox lines they copy, by their bytes, in order. A sprite
 * writes each event to the outbox, then to stdout, so the heads of the two queues are normally
 * the same event. When they are not, the stdout line's copy is looked for a few lines ahead (the
 * outbox lines skipped have no stdout copy here); a line not found there, or still waiting when
 * the outbox has nothing more, is unmatched: parsed and stored from stdout, where the unique key
 * drops it if the outbox had it after all.
 *
 * Lines are kept as where they lie (the buffer, a start and an end, in parallel arrays), not as a
 * view each: thousands wait at a time, and every scavenge would copy each view until matched.
 */
export class CopyMatcher {
  /** Outbox lines: the batch bytes each lies in, where its JSON starts and ends. */
  private outBytes: Buffer[] = [];
  private outStart: number[] = [];
  private outEnd: number[] = [];
  private outHead = 0;
  /** Outbox lines removed from the front of the outbox arrays (by compaction). */
  private dropped = 0;
  /** stdout event lines: the buffer each lies in, where the JSON after the prefix starts and ends, its line number. */
  private stdBytes: Buffer[] = [];
  private stdStart: number[] = [];
  private stdEnd: number[] = [];
  private stdLine: number[] = [];
  private stdHead = 0;
  private unmatched: StdoutEvent[] = [];

  constructor(
    private readonly limit: number,
    private readonly lookahead: number,
  ) {}

  /** stdout event lines not yet matched or given up. */
  get waiting(): number {
    return this.stdBytes.length - this.stdHead + this.unmatched.length;
  }

  /** An outbox event's line text (as written, not redacted): `bytes` from `start` to `end`. */
  addOutbox(bytes: Buffer, start: number, end: number): void {
    this.outBytes.push(bytes);
    this.outStart.push(start);
    this.outEnd.push(end);
    // Lines whose copies never came (a sprite writing only its outbox): forget the oldest half.
    if (this.outBytes.length - this.outHead > this.limit) this.outHead = this.outBytes.length - this.limit / 2;
  }

  /** A stdout event line: `bytes` from `start` (where the prefix starts) to `end` (without its line end). */
  addStdout(bytes: Buffer, start: number, end: number, lineNo: number): void {
    this.stdBytes.push(bytes);
    this.stdStart.push(start + PREFIX.length);
    this.stdEnd.push(end);
    this.stdLine.push(lineNo);
  }

  /** Outbox lines added so far. */
  get added(): number {
    return this.dropped + this.outBytes.length;
  }

  /** Outbox lines matched or given up so far (the first `passed` added are no longer looked at). */
  get passed(): number {
    return this.dropped + this.outHead;
  }

  /** Pair what can be paired now. */
  match(): void {
    const outs = this.outBytes.length;
    while (this.stdHead < this.stdBytes.length && this.outHead < outs) {
      const i = this.stdHead;
      const end = Math.min(outs, this.outHead + this.lookahead);
      let j = this.outHead;
      while (j < end && !this.same(i, j)) j++;
      if (j < end) this.outHead = j + 1;
      else if (end - this.outHead < this.lookahead)
        break; // its copy may be in the next batch
      else this.unmatched.push(this.stdoutEvent(i));
      this.stdHead++;
    }
    if (this.stdHead > 1024 && this.stdHead * 2 > this.stdBytes.length) {
      const h = this.stdHead;
      this.stdBytes = this.stdBytes.slice(h);
      this.stdStart = this.stdStart.slice(h);
      this.stdEnd = this.stdEnd.slice(h);
      this.stdLine = this.stdLine.slice(h);
      this.stdHead = 0;
    }
    if (this.outHead > 1024 && this.outHead * 2 > this.outBytes.length) {
      const h = this.outHead;
      this.outBytes = this.outBytes.slice(h);
      this.outStart = this.outStart.slice(h);
      this.outEnd = this.outEnd.slice(h);
      this.dropped += h;
      this.outHead = 0;
    }
  }

  /** Lines without an outbox copy so far, the ones still waiting included (the outbox has nothing more now). */
  takeUnmatched(): StdoutEvent[] {
    const out = this.unmatched;
    for (let i = this.stdHead; i < this.stdBytes.length; i++) out.push(this.stdoutEvent(i));
    this.unmatched = [];
    this.stdBytes = [];
    this.stdStart = [];
    this.stdEnd = [];
    this.stdLine = [];
    this.stdHead = 0;
    return out;
  }

  private stdoutEvent(i: number): StdoutEvent {
    return {
      line: this.stdBytes[i]!.subarray(this.stdStart[i]! - PREFIX.length, this.stdEnd[i]!),
      line_no: this.stdLine[i]!,
    };
  }

  /**
   * stdout line `i` after its prefix is exactly outbox line `j`. Never true of a line of a released
   * batch: its buffer was moved back to the decoder thread, which leaves it empty here.
   */
  private same(i: number, j: number): boolean {
    const out = this.outBytes[j]!;
    const start = this.outStart[j]!;
    const end = this.outEnd[j]!;
    const from = this.stdStart[i]!;
    const to = this.stdEnd[i]!;
    return (
      end > start &&
      out.length >= end &&
      to - from === end - start &&
      this.stdBytes[i]!.compare(out, start, end, from, to) === 0
    );
  }
}
