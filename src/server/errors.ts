import { isPmagentError, type ErrorCode } from "../core/index.js";
import { UnauthorizedError } from "./auth.js";

/** Refusals that are about the state of the thing, not about who asks: 409, like a stale write. */
const STATE_CONFLICTS = new Set<ErrorCode>([
  "transition_refused",
  "run_finished",
  "run_not_waiting",
  "entry_finished",
  "claim_lost",
]);

/** The server's own kernel surfaces being unreadable is a dependency failure, not the caller's fault. */
const UNAVAILABLE = new Set<ErrorCode>(["oa_surface_missing", "oa_surface_invalid"]);

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** HTTP status, headers and `{error: {code, message}}` body of any error a handler throws. */
export function httpError(err: unknown): { status: number; body: ErrorBody; headers?: Record<string, string> } {
  if (err instanceof UnauthorizedError)
    return { status: 401, body: { error: { code: err.code, message: err.message } } };
  if (isPmagentError(err)) {
    const status = UNAVAILABLE.has(err.code)
      ? 503
      : err.kind === "usage"
        ? 400
        : err.kind === "not_found"
          ? 404
          : err.kind === "conflict"
            ? 409
            : err.kind === "refused"
              ? STATE_CONFLICTS.has(err.code)
                ? 409
                : 403
              : err.kind === "unavailable"
                ? 503
                : 500;
    // A failure that passes by itself (store_busy: another process's write holds the lock) says when to retry.
    const retry = err.details?.retry_after_s;
    return {
      status,
      body: { error: err.toJSON() },
      ...(typeof retry === "number" ? { headers: { "retry-after": String(retry) } } : {}),
    };
  }
  // Fastify's own errors (body too large, bad JSON, unsupported media type) carry a statusCode.
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.code === "FST_ERR_BAD_URL")
      return {
        status: 400,
        body: {
          error: {
            code: "invalid_url",
            message: "the request path is not a valid URL: a % must start an escape of two hex digits",
          },
        },
      };
    const code =
      e.statusCode === 413 ? "body_too_large" : e.statusCode === 415 ? "unsupported_media_type" : "invalid_request";
    const message =
      e.statusCode === 413
        ? "the request body is larger than this server accepts"
        : e.code === "FST_ERR_CTP_INVALID_JSON_BODY" || /JSON/.test(e.message ?? "")
          ? `the request body is not valid JSON: ${e.message}`
          : (e.message ?? "bad request");
    return { status: e.statusCode, body: { error: { code, message } } };
  }
  return { status: 500, body: { error: { code: "internal", message: "internal error: see the server log" } } };
}
