import { readFileSync } from "node:fs";
import type { Project } from "../../config/index.js";
import {
  NotFoundError,
  Redactor,
  RefusedError,
  UnavailableError,
  UsageError,
  confinePath,
  secretsFromEnv,
} from "../../core/index.js";

export const CREDENTIAL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

export interface SecretStoreOptions {
  /** Environment variables looked up by name (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Project root, against which `file` is confined. */
  root: string;
  /** JSON file of name → string value (config `secrets.file`), relative to root. */
  file?: string;
}

/**
 * Where FETCH_CREDENTIAL reads secrets: environment variables first, then the secrets file. The
 * file is read on every lookup so that a rotated secret is picked up without a restart. Values
 * never appear in an error message.
 */
export class SecretStore {
  private readonly env: NodeJS.ProcessEnv;
  private readonly file: string | undefined;

  constructor(options: SecretStoreOptions) {
    this.env = options.env ?? process.env;
    this.file = options.file === undefined ? undefined : confinePath(options.root, options.file, "secrets.file");
  }

  /** The secret's value, or a NotFoundError naming where it was looked for. */
  get(name: string): string {
    if (!CREDENTIAL_NAME.test(name)) {
      throw new UsageError(
        "invalid_credential_name",
        `credential name "${name.slice(0, 64)}" is invalid: expected letters, digits, '_', '.' or '-', starting with a letter or '_'`,
      );
    }
    const fromEnv = this.env[name];
    if (typeof fromEnv === "string" && fromEnv.length > 0) return fromEnv;
    const fromFile = this.readFile()[name];
    if (fromFile !== undefined) return fromFile;
    const where = this.file ? `the environment or ${this.file}` : "the environment (no secrets.file is configured)";
    throw new NotFoundError("credential_not_found", `credential "${name}" is not set in ${where}`);
  }

  /**
   * Every value of the secrets file, for redaction (none without a file, or when it does not
   * exist). An unreadable or invalid file throws, as `get` does: a caller that cannot know the
   * values must not go on as if there were none.
   */
  values(): string[] {
    return Object.values(this.readFile());
  }

  private readFile(): Record<string, string> {
    if (!this.file) return {};
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return {};
      throw new UnavailableError(
        "secrets_file_unreadable",
        `cannot read secrets file ${this.file}: ${code ?? "error"}`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Never quote the parser's message: it can contain a piece of the file, i.e. a secret.
      throw new UsageError(
        "secrets_file_invalid",
        `secrets file ${this.file} is not valid JSON: expected an object of name → string value`,
      );
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new UsageError(
        "secrets_file_invalid",
        `secrets file ${this.file} must hold a JSON object of name → string value`,
      );
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v !== "string")
        throw new UsageError("secrets_file_invalid", `secrets file ${this.file}: the value of "${k}" must be a string`);
      out[k] = v;
    }
    return out;
  }
}

/** Refuse a credential the role is not allowed (config `roles[].credentials`). */
export function assertCredentialAllowed(role: string, allowed: readonly string[], name: string): void {
  if (!allowed.includes(name)) {
    const list = allowed.length > 0 ? `it may fetch ${allowed.join(", ")}` : "it may fetch none";
    throw new RefusedError(
      "credential_not_allowed",
      `role "${role}" may not fetch credential "${name}" (${list}); add it to that role's "credentials" in pmagent.config.json to allow it`,
    );
  }
}

/**
 * The redactor of a project's processes (server responses, notifications, action records, logs):
 * the environment's secret values, `extra`, and every value of the secrets file. A file that
 * cannot be read adds nothing here; the supervisor refuses the runs that need it (so what they
 * store never needed its values).
 */
export function projectRedactor(
  project: Project,
  env: NodeJS.ProcessEnv = process.env,
  extra: Iterable<string> = [],
): Redactor {
  let fromFile: string[];
  try {
    fromFile = new SecretStore({ env, root: project.root, file: project.config.secrets.file }).values();
  } catch {
    fromFile = [];
  }
  return new Redactor([...secretsFromEnv(env), ...extra, ...fromFile]);
}
