import { Option, type Command } from "./commander.js";
import { inspect } from "node:util";
import { UsageError } from "../core/index.js";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PAGE_ORDERS, type Page, type PageOrder } from "../store/index.js";

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
  const described = options.markdown
    ? "output format: text (Markdown; md is the same) or json"
    : "output format: text or json";
  return new Option("--format <format>", described)
    .choices(Object.keys(names))
    .default(defaultFormat)
    .argParser((value: string) => {
      const format = names[value];
      if (format === undefined)
        throw new UsageError("invalid_format", `--format expects ${orList(Object.keys(names))}, got "${value}"`);
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
    if (!/^-?\d+$/.test(value))
      throw new UsageError("invalid_option", `${flag} expects a whole number, got "${value}"`);
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
    throw new UsageError(
      "input_unreadable",
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
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

/**
 * `--limit`, `--order` and `--cursor` of a list command: the API's paging (default 50, at most
 * 500; `--cursor` takes the `next` the previous page printed).
 */
export function pageOptions<C extends Command>(cmd: C, order: PageOrder): C {
  for (const option of [
    new Option("--limit <n>", `at most N items (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})`).argParser(
      intOption("--limit", 1, MAX_PAGE_LIMIT),
    ),
    new Option("--order <order>", `newest or oldest first (default ${order})`).choices([...PAGE_ORDERS]),
    new Option("--cursor <cursor>", "the next page: the cursor the previous page printed"),
  ])
    cmd.addOption(option);
  return cmd;
}

export interface PageOpts {
  limit?: number;
  order?: PageOrder;
  cursor?: string;
}

/** Print a page: JSON `{items, next}`, or one line per item and, when there is more, how to get it. */
export function printPage<T>(
  format: Format,
  page: Page<T>,
  line: (item: T) => string,
  none: string,
  json: (item: T) => unknown = (x) => x,
): void {
  print(format, { items: page.items.map(json), next: page.next }, () =>
    [
      ...(page.items.length ? page.items.map(line) : [none]),
      ...(page.next === null ? [] : [`more: --cursor ${page.next}`]),
    ].join("\n"),
  );
}
