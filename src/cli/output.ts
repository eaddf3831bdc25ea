import { Option } from "commander";
import { UsageError } from "../core/index.js";

export type Format = "json" | "text";

export function formatOption(defaultFormat: Format = "text"): Option {
  return new Option("--format <format>", "output format").choices(["json", "text"]).default(defaultFormat);
}

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
