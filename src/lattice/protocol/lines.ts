/**
 * Byte-level line splitting with a per-line size limit, shared by the stdout parser and the
 * outbox reader. Lines are split on `\n` before decoding, so a UTF-8 character or an event split
 * across two reads still arrives whole. A line over the limit is never buffered: its first bytes
 * are kept for the excerpt and the rest is discarded up to the next newline.
 */

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
/** How much of an over-long line is kept to show in the protocol error. */
export const EXCERPT_BYTES = 200;

export type RawLine =
  { kind: "line"; line_no: number; bytes: Buffer } | { kind: "overlong"; line_no: number; size: number; head: Buffer };

export class LineSplitter {
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Set while skipping the rest of an over-long line; holds its size so far and its head. */
  private skipping: { size: number; head: Buffer } | undefined;
  private lineNo: number;

  constructor(
    readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    firstLineNo = 1,
  ) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1)
      throw new RangeError(`maxLineBytes must be a positive integer, got ${maxLineBytes}`);
    this.lineNo = firstLineNo;
  }

  /** Bytes held for the current incomplete line (never more than maxLineBytes). */
  get bufferedBytes(): number {
    return this.partsBytes;
  }

  /** Number the next complete line will get. */
  get nextLineNo(): number {
    return this.lineNo;
  }

  /** True when an incomplete line is pending (data after the last newline). */
  get pending(): boolean {
    return this.partsBytes > 0 || this.skipping !== undefined;
  }

  /**
   * Split `chunk` into the lines it completes. With `owned` (the caller never reuses `chunk`), a
   * line that lies whole inside it is returned as a view of it instead of a copy.
   */
  push(chunk: Buffer, owned = false): RawLine[] {
    const out: RawLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.take(chunk.subarray(start));
        break;
      }
      if (owned && !this.pending && nl - start <= this.maxLineBytes) {
        out.push({ kind: "line", line_no: this.lineNo++, bytes: chunk.subarray(start, nl) });
      } else {
        this.take(chunk.subarray(start, nl));
        out.push(this.finishLine());
      }
      start = nl + 1;
    }
    return out;
  }

  /**
   * Number a complete line the caller split off itself (only between lines: nothing pending), so
   * a reader that finds whole lines in its own buffer keeps one numbering with this splitter.
   */
  countLine(): number {
    if (this.pending) throw new Error("countLine() while a line is pending");
    return this.lineNo++;
  }

  /** The final line when the stream ended without a newline, if there is one. */
  end(): RawLine[] {
    return this.pending ? [this.finishLine()] : [];
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.size += piece.length;
      return;
    }
    if (this.partsBytes + piece.length > this.maxLineBytes) {
      const held = Buffer.concat([...this.parts, piece.subarray(0, EXCERPT_BYTES)]);
      this.skipping = { size: this.partsBytes + piece.length, head: held.subarray(0, EXCERPT_BYTES) };
      this.parts = [];
      this.partsBytes = 0;
      return;
    }
    // Copy: the caller may reuse its buffer for the next read.
    this.parts.push(Buffer.from(piece));
    this.partsBytes += piece.length;
  }

  private finishLine(): RawLine {
    const line_no = this.lineNo++;
    if (this.skipping) {
      const { size, head } = this.skipping;
      this.skipping = undefined;
      return { kind: "overlong", line_no, size, head };
    }
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.partsBytes = 0;
    return { kind: "line", line_no, bytes };
  }
}
