/**
 * "1 entry", "6 entries", "1 workflow run": a count with its noun, for every message that
 * prints one. The plural is English's regular one unless `many` gives it.
 */
export function plural(n: number, one: string, many?: string): string {
  return `${n} ${n === 1 ? one : (many ?? pluralOf(one))}`;
}

function pluralOf(word: string): string {
  if (/[^aeiou]y$/i.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(word)) return `${word}es`;
  return `${word}s`;
}
