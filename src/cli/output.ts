import { Option } from "commander";
import { inspect } from "node:util";
import { UsageError } from "../core/index.js";

/**
 * The one output vocabulary: `--format text|json` on every command that prints a result. `text`
 * is for a person; `json` is the data as it is, and makes errors JSON too (see program.ts).
 */
export type Format = "json" | "text";

/**
 * `--format text|json`. `markdown`: the text form is Markdown (Kai's digests), so `md` is accepted
 * as another name for `text` (Kai's original spelling).
 */
export function formatOption(defaultFormat: Format = "text", options: { markdown?: boolean } = {}): Option {
  const names: Record<string, Format> = { text: "text", json: "json", ...(options.markdown ? { md: "text" } : {}) };
  const described = options.markdown ? "output format: text (Markdown; md is the same) or json" : "output format: text or json";
  return new Option("--format <format>", described)
    .choices(Object.keys(names))
    .default(defaultFormat)
    .argParser((value: string) => {
      const format = names[value];
      if (format === undefined) throw new UsageError("invalid_format", `--format expects ${orList(Object.keys(names))}, got "${value}"`);
      return format;
    });
}

const orList = (words: string[]) => `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;

/** Print a result: JSON exactly as the data is (pretty), or the text rendering. */
export function print(format: Format, value: unknown, text: () => string): void {
  if (format === "json") process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else {
    const t = text();
    process.stdout.write(t.endsWith("\n") || t === "" ? t : `${t}\n`);
  }
}

/** Parse an integer flag or throw a usage error naming it. */
export function intOption(flag: string, min?: number, max?: number): (value: string) => number {
  return (value: string) => {
    if (!/^-?\d+$/.test(value)) throw new UsageError("invalid_option", `${flag} expects a whole number, got "${value}"`);
    const n = Number(value);
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      throw new UsageError("invalid_option", `${flag} must be between ${min ?? "-∞"} and ${max ?? "∞"}, got ${n}`);
    }
    return n;
  };
}

/** Read a FILE argument, `-` meaning standard input. */
export async function readInput(file: string): Promise<string> {
  if (file === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
  const { readFile } = await import("node:fs/promises");
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError("input_unreadable", `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * Whether to colour what goes to `stream`: only a terminal, never under NO_COLOR
 * (https://no-color.org: set and not empty), nor where the terminal has no colours (TERM=dumb).
 */
export function colourOn(stream: NodeJS.WriteStream): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  return stream.isTTY === true && (typeof stream.hasColors !== "function" || stream.hasColors());
}

export type Style = "red" | "green" | "yellow" | "cyan" | "gray" | "bold" | "dim";

/**
 * `text` in `style` when `stream` takes colour, else as is. ANSI codes from util.inspect.colors
 * (the table util.styleText uses), since styleText itself checks only stdout on newer Nodes.
 */
export function paint(stream: NodeJS.WriteStream, style: Style, text: string): string {
  if (!colourOn(stream)) return text;
  const [open, close] = inspect.colors[style]!;
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/** The colour a run's (or an entry's) state is shown in. */
export function stateStyle(state: string): Style | undefined {
  if (state === "succeeded" || state === "done") return "green";
  if (state === "failed" || state === "error") return "red";
  if (state === "waiting") return "yellow";
  if (state === "canceled") return "gray";
  if (state === "running" || state === "in_progress") return "cyan";
  return undefined;
}
