import { PmagentError, type CodeOf, type ErrorCode, type ErrorKind } from "../core/index.js";

/**
 * Raised by the OA Tools API: an unknown tool id, a tool the program may not call, a guard that is
 * not registered, failed or printed something that is not JSON. The spec names this class.
 */
export class OAToolError extends PmagentError {
  constructor(code: ErrorCode, message: string, options: { kind?: ErrorKind; details?: Record<string, unknown> } = {}) {
    super(code, message, { kind: options.kind ?? "refused", details: options.details });
  }
}

/** A required kernel surface is missing or invalid (snapshot exits 1 with this). */
export class OASurfaceError extends PmagentError {
  constructor(code: CodeOf<"refused">, message: string, details?: Record<string, unknown>) {
    super(code, message, { kind: "refused", details });
  }
}
