import { marks } from "../../store/index.js";

/** `(?, …), (?, …)`: the VALUES of `n` rows of `cols` parameters. */
export function rows(n: number, cols: number): string {
  const one = `(${marks(cols)})`;
  return new Array(n).fill(one).join(", ");
}

/** `items` in arrays of at most `size`. */
export function* chunks<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}
