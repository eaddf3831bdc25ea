/**
 * Locate the first syntax error in a JSON text (RFC 8259), with its position and what was
 * expected. V8's JSON.parse messages are inconsistent (some carry no position, some echo the
 * input), and a bad board comment must be reported with a precise, secret-free reason.
 * Iterative, so deeply nested input cannot overflow the stack.
 */
export interface JsonSyntaxError {
  /** Offset in UTF-16 code units. */
  position: number;
  message: string;
}

type State = "value" | "value_or_close" | "key" | "key_or_close" | "after";

const WS = new Set([" ", "\t", "\n", "\r"]);
const WORD = /[a-z]+/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const stack: Array<"{" | "["> = [];
  let state: State = "value";
  let i = 0;
  const fail = (message: string, at = i): JsonSyntaxError => ({ position: at, message });
  const describe = (at: number) => (at >= text.length ? "end of input" : `character ${JSON.stringify(text[at])}`);
  const skipWs = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };

  for (;;) {
    skipWs();
    const c = text[i];
    if (state === "value" || state === "value_or_close") {
      if (c === "]" && state === "value_or_close") {
        stack.pop();
        i++;
        state = "after";
      } else if (c === "{") {
        stack.push("{");
        i++;
        state = "key_or_close";
      } else if (c === "[") {
        stack.push("[");
        i++;
        state = "value_or_close";
      } else if (c === '"') {
        const err = scanString();
        if (err) return err;
        state = "after";
      } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
        const err = scanNumber();
        if (err) return err;
        state = "after";
      } else if (c !== undefined && /[a-z]/.test(c)) {
        WORD.lastIndex = i;
        const word = WORD.exec(text)![0];
        if (word !== "true" && word !== "false" && word !== "null")
          return fail(`unexpected word "${word.slice(0, 20)}" (expected a value; literals are true, false and null)`);
        i += word.length;
        state = "after";
      } else {
        return fail(`unexpected ${describe(i)} (expected a value)`);
      }
    } else if (state === "key" || state === "key_or_close") {
      if (c === "}" && state === "key_or_close") {
        stack.pop();
        i++;
        state = "after";
      } else if (c === '"') {
        const err = scanString();
        if (err) return err;
        skipWs();
        if (text[i] !== ":") return fail(`unexpected ${describe(i)} (expected ':' after property name)`);
        i++;
        state = "value";
      } else {
        return fail(`unexpected ${describe(i)} (expected a double-quoted property name)`);
      }
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        return i < text.length ? fail(`unexpected ${describe(i)} after the JSON value`) : undefined;
      }
      if (c === ",") {
        i++;
        state = top === "{" ? "key" : "value";
      } else if ((c === "}" && top === "{") || (c === "]" && top === "[")) {
        stack.pop();
        i++;
      } else {
        return fail(
          `unexpected ${describe(i)} (expected ',' or '${top === "{" ? "}" : "]"}' after ${top === "{" ? "property value" : "array element"})`,
        );
      }
    }
  }

  function scanString(): JsonSyntaxError | undefined {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return undefined;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else return fail(`invalid escape sequence in string (expected \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)`);
      } else if (c.charCodeAt(0) < 0x20) {
        return fail(
          `unescaped control character U+${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()} in string (write it as an escape, e.g. \\n)`,
        );
      } else {
        i++;
      }
    }
    return fail("unterminated string (missing closing '\"')", start);
  }

  function scanNumber(): JsonSyntaxError | undefined {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail("invalid number (expected digits, e.g. -1, 0.5, 2e3)");
    const next = text[i + m[0].length];
    if (next !== undefined && /[0-9.eE+-]/.test(next))
      return fail("invalid number (no leading zeros; a '.' or exponent must be followed by digits)");
    i += m[0].length;
    return undefined;
  }
}
