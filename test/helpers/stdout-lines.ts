import { LineSplitter, classifyStdoutLine, type ParsedLine, type RawLine } from "../../src/lattice/index.js";

/**
 * A sprite's stdout read the way ingest reads it: split into lines (LineSplitter, across chunk
 * boundaries) and each line classified (classifyStdoutLine) as an event, a log line or a
 * protocol error.
 */
export function stdoutLines(options: { maxLineBytes?: number; redact?: (text: string) => string } = {}) {
  const splitter = new LineSplitter(options.maxLineBytes);
  const classify = (line: RawLine): ParsedLine => classifyStdoutLine(line, splitter.maxLineBytes, options.redact);
  return {
    push: (chunk: Buffer | string): ParsedLine[] =>
      splitter.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk).map(classify),
    /** The last line, even without a newline. */
    end: (): ParsedLine[] => splitter.end().map(classify),
    /** Bytes held for the current incomplete line. */
    get bufferedBytes(): number {
      return splitter.bufferedBytes;
    },
  };
}
