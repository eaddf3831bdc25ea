/**
 * Secret redaction for everything pmagent stores or prints on a sprite's behalf.
 * Two layers: exact values known to be secret (tokens from config and the environment), and
 * token-shaped strings (GitHub, OpenAI, Slack, AWS, bearer headers, PEM keys) from anywhere.
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

export class Redactor {
  private readonly secrets: string[];

  constructor(secrets: Iterable<string> = []) {
    // Longest first so that a secret containing another is replaced whole; very short values
    // would redact ordinary words, so they are not treated as secrets.
    this.secrets = [...new Set([...secrets].filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  }

  /** The secret values, to build the same redactor on another thread of this process (never to show). */
  secretValues(): string[] {
    return [...this.secrets];
  }

  withSecrets(more: Iterable<string>): Redactor {
    return new Redactor([...this.secrets, ...more]);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    if (!TOKEN_HINT.test(out)) return out;
    for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
    return out;
  }

  /** Redact every string inside a JSON-like value (keys included). */
  redactValue<T>(value: T): T {
    return JSON.parse(this.redact(JSON.stringify(value))) as T;
  }
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
