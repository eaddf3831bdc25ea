import type { CodeOf, ErrorCode } from "./error-codes.js";

/**
 * Every error pmagent raises on purpose is a PmagentError with a stable `code`.
 * CLI, HTTP API and MCP map these codes to exit codes and status codes; the message is
 * written for the user who has to fix the problem and never contains a secret.
 */
export type ErrorKind =
  | "usage" // bad input from the user: CLI exit 2, HTTP 400
  | "refused" // a valid request the rules refuse: CLI exit 1, HTTP 403/409
  | "not_found" // CLI exit 1, HTTP 404
  | "conflict" // stale write or duplicate: CLI exit 1, HTTP 409
  | "unavailable" // a dependency (database, GitHub, model) failed: CLI exit 1, HTTP 502/503
  | "internal";

export class PmagentError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { kind?: ErrorKind; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.kind = options.kind ?? "internal";
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** Bad input: a malformed file, flag or request body. */
export class UsageError extends PmagentError {
  constructor(code: CodeOf<"usage">, message: string, details?: Record<string, unknown>) {
    super(code, message, { kind: "usage", details });
  }
}

export class NotFoundError extends PmagentError {
  constructor(code: CodeOf<"not_found">, message: string, details?: Record<string, unknown>) {
    super(code, message, { kind: "not_found", details });
  }
}

export class ConflictError extends PmagentError {
  constructor(code: CodeOf<"conflict">, message: string, details?: Record<string, unknown>) {
    super(code, message, { kind: "conflict", details });
  }
}

export class RefusedError extends PmagentError {
  constructor(code: CodeOf<"refused">, message: string, details?: Record<string, unknown>) {
    super(code, message, { kind: "refused", details });
  }
}

export class UnavailableError extends PmagentError {
  constructor(
    code: CodeOf<"unavailable">,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, { kind: "unavailable", ...options });
  }
}

/**
 * Whether `err` is a PmagentError with one of `codes`: `hasCode(err, "claim_lost")` for
 * `err instanceof PmagentError && err.code === "claim_lost"`, with the code checked by the compiler.
 */
export function hasCode<C extends ErrorCode>(err: unknown, ...codes: C[]): err is PmagentError & { code: C } {
  return err instanceof PmagentError && (codes as ErrorCode[]).includes(err.code);
}

export function isPmagentError(err: unknown): err is PmagentError {
  return err instanceof PmagentError;
}

/** CLI exit codes, documented in `pmagent --help`: 0 ok, 1 refused/failed, 2 usage. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof PmagentError && err.kind === "usage") return 2;
  return 1;
}
