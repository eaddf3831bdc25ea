/**
 * Secret redaction for everything pmagent stores or prints on a sprite's behalf.
 * Two layers: exact values known to be secret (tokens from config, the environment and the
 * secrets file), and token-shaped strings (GitHub, OpenAI, Slack, AWS, bearer headers, PEM keys)
 * from anywhere.
 *
 * A known secret is found by meaning, not spelling: as written, and in the encodings a sprite can
 * hide it in without effort — percent-encoding (any mix of encoded and literal characters, also
 * `%25`-doubled), JSON `\uXXXX` and short escapes left in text, base64 (standard and URL-safe, at
 * any alignment inside a longer blob) and hex. JSON is decoded by its parser, not here: callers
 * holding JSON redact its parsed values (`redactValue`, `redactJson`), which decode every escape.
 */
const TOKEN_PATTERNS: RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\b(?:Bearer|token)\s+[A-Za-z0-9._~+/-]{20,}=*/gi,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/**
 * Matches wherever any of TOKEN_PATTERNS could (each pattern starts with one of these, case aside),
 * so text without a hit, which is most text, skips the seven replacements.
 */
const TOKEN_HINT = /gh[pousr]_|github_pat_|sk-|xox[abposr]-|AKIA|bearer|token|-----BEGIN/i;

export const REDACTED = "[REDACTED]";

/** Values shorter than this would redact ordinary words, so they are not treated as secrets. */
export const MIN_SECRET_LENGTH = 6;

/** A base64 blob (either alphabet): an encoded secret inside one is redacted with the whole blob. */
const BASE64_CHAR = /[A-Za-z0-9+/_=-]/;

/** One spelling of a secret that can be found with a plain substring search. */
interface Form {
  text: string;
  /** Encoded forms are redacted with the whole run of base64/hex characters around them. */
  blob: boolean;
}

/**
 * The base64 text that encodes `secret` whatever precedes and follows it in the encoded data:
 * for each of the three alignments, the characters made of the secret's bits only (URL-safe
 * alphabet too). A blob holding the secret holds one of these as a substring.
 */
function base64Cores(secret: Buffer): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const std = Buffer.concat([Buffer.alloc(k), secret]).toString("base64");
    // Characters touching the k leading bytes, and the last one touching what follows, vary.
    const skip = [0, 2, 3][k]!;
    const end = Math.floor(((k + secret.length) * 8) / 6);
    const core = std.slice(skip, end);
    out.push(core);
    const url = core.replace(/\+/g, "-").replace(/\//g, "_");
    if (url !== core) out.push(url);
  }
  return out;
}

const hexClass = (digit: string): string =>
  /[a-f]/i.test(digit) ? `[${digit.toLowerCase()}${digit.toUpperCase()}]` : digit;
const hexPattern = (hex: string): string => [...hex].map(hexClass).join("");
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/**
 * A pattern matching `char` however it is written: itself, percent-encoded (`%53`, `%2553`),
 * JSON-escaped in text (`\u0053`, `\\u0053`, `\"`), `+` for a space.
 */
function charPattern(char: string): string {
  const alts = [escapeRegExp(char)];
  const utf8 = Buffer.from(char, "utf8").toString("hex");
  const pct = (prefix: string) =>
    utf8
      .match(/../g)!
      .map((b) => `${prefix}${hexPattern(b)}`)
      .join("");
  alts.push(pct("%"), pct("%25"));
  const units = [...Array(char.length).keys()].map((i) => char.charCodeAt(i).toString(16).padStart(4, "0"));
  alts.push(units.map((u) => `\\\\{1,2}u${hexPattern(u)}`).join(""));
  const short: Record<string, string> = {
    '"': '\\\\"',
    "\\": "\\\\\\\\",
    "/": "\\\\/",
    "\n": "\\\\n",
    "\r": "\\\\r",
    "\t": "\\\\t",
  };
  if (short[char]) alts.push(short[char]);
  if (char === " ") alts.push("\\+");
  return `(?:${alts.join("|")})`;
}

/** Characters whose JSON escape is not `\u`: a text holding `\` may spell a secret with them. */
const SHORT_ESCAPED = /["\\/\n\r\t]/;

export class Redactor {
  private readonly secrets: string[];
  private readonly forms: Form[];
  /** Every form with each character in any of its spellings (see charPattern); null without secrets. */
  private readonly spelled: RegExp | null;
  /** A secret holds a character written with a short escape or `+`: any `\` or `+` may hide one. */
  private readonly oddChars: boolean;

  constructor(secrets: Iterable<string> = []) {
    // Longest first so that a secret containing another is replaced whole.
    this.secrets = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
      (a, b) => b.length - a.length,
    );
    const forms = new Map<string, Form>();
    for (const s of this.secrets) {
      forms.set(s, { text: s, blob: false });
      const bytes = Buffer.from(s, "utf8");
      for (const core of base64Cores(bytes)) if (!forms.has(core)) forms.set(core, { text: core, blob: true });
      const hex = bytes.toString("hex");
      for (const h of [hex, hex.toUpperCase()]) if (!forms.has(h)) forms.set(h, { text: h, blob: true });
    }
    this.forms = [...forms.values()].sort((a, b) => b.text.length - a.text.length);
    this.spelled = this.forms.length
      ? new RegExp(this.forms.map((f) => [...f.text].map(charPattern).join("")).join("|"), "g")
      : null;
    this.oddChars = this.secrets.some((s) => SHORT_ESCAPED.test(s) || s.includes(" "));
  }

  /** The secret values, to build the same redactor on another thread of this process (never to show). */
  secretValues(): string[] {
    return [...this.secrets];
  }

  withSecrets(more: Iterable<string>): Redactor {
    return new Redactor([...this.secrets, ...more]);
  }

  /**
   * Whether `text` may hold something to redact, by cheap tests only: a form of a secret as it is,
   * an escape or percent sign that may spell one, a token's announcing word. False means `redact`
   * leaves the text as it is (and a JSON text's parsed values too), so it can be skipped.
   */
  suspect(text: string): boolean {
    if (TOKEN_HINT.test(text)) return true;
    if (this.spelled === null) return text.includes("\\u");
    for (const f of this.forms) if (text.includes(f.text)) return true;
    return text.includes("%") || text.includes("\\u") || (this.oddChars && (text.includes("\\") || text.includes("+")));
  }

  redact(text: string): string {
    let out = text;
    for (const f of this.forms) {
      if (!out.includes(f.text)) continue;
      out = f.blob ? redactBlobs(out, f.text) : out.split(f.text).join(REDACTED);
    }
    if (
      this.spelled !== null &&
      (out.includes("%") || out.includes("\\u") || (this.oddChars && (out.includes("\\") || out.includes("+"))))
    )
      out = out.replace(this.spelled, REDACTED);
    if (!TOKEN_HINT.test(out)) return out;
    for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
    return out;
  }

  /**
   * Redact every string inside a JSON-like value (keys included), after JSON's own decoding: a
   * secret written with escapes is a plain string here. Returns `value` itself when nothing is
   * redacted. Values JSON cannot hold (functions, undefined) are dropped as JSON.stringify would.
   */
  redactValue<T>(value: T): T {
    if (value === undefined) return value;
    return this.walk(JSON.parse(JSON.stringify(value)) as unknown) as T;
  }

  /**
   * A JSON text with every string value and key redacted, or the text itself when nothing is (the
   * cheap `suspect` test first, so that most texts are not parsed at all). Throws on invalid JSON.
   */
  redactJson(json: string): { json: string; value: unknown } | null {
    if (!this.suspect(json)) return null;
    const value = JSON.parse(json) as unknown;
    const redacted = this.walk(value);
    return redacted === value ? null : { json: JSON.stringify(redacted), value: redacted };
  }

  /** The value with its strings redacted; the same object when none changed. */
  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const v = this.walk(value[i]);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      let changed = false;
      const next = entries.map(([k, v]) => {
        const rk = this.redact(k);
        const rv = this.walk(v);
        if (rk !== k || rv !== v) changed = true;
        return [rk, rv] as const;
      });
      return changed ? Object.fromEntries(next) : value;
    }
    return value;
  }
}

/** Replace every run of base64/hex characters that contains `core` with REDACTED. */
function redactBlobs(text: string, core: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf(core); at !== -1; at = text.indexOf(core, from)) {
    let start = at;
    while (start > from && BASE64_CHAR.test(text[start - 1]!)) start--;
    let end = at + core.length;
    while (end < text.length && BASE64_CHAR.test(text[end]!)) end++;
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}

/** Names of environment variables whose values are secrets. */
export function isSecretEnvName(name: string): boolean {
  return /(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|CREDENTIAL|_KEY$)/i.test(name);
}

/** Secret values present in an environment (used to seed a Redactor). */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter(([k, v]) => isSecretEnvName(k) && typeof v === "string" && v.length > 0)
    .map(([, v]) => v as string);
}

/** A database URL with its password removed, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:@/]+):[^@/]+@/, "//$1:***@");
  }
}
