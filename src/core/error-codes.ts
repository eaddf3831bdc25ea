import type { ErrorKind } from "./errors.js";

/**
 * The registry of every error code pmagent raises, each with its kind (`code: kind`; a code raised
 * with two kinds is declared with both, `"usage" | "not_found"`). Each module declares the codes it
 * raises in its own `error-codes.ts` by declaration merging:
 *
 *     declare module "../core/index.js" {
 *       interface ErrorCodes {
 *         claim_lost: "refused";
 *       }
 *     }
 *
 * A code is declared once, by the lowest module that raises it. The error classes accept only a
 * declared code (and `UsageError` and its siblings only a code of their kind), so a typo or a new
 * code nobody declared does not compile. These are core's own.
 */
export interface ErrorCodes {
  invalid_date: "usage";
  invalid_input: "usage";
  invalid_json: "usage";
  path_is_link: "refused";
  path_outside_root: "refused";
}

/** Any declared error code. */
export type ErrorCode = keyof ErrorCodes;

/** The codes declared with kind `K` (among others): `CodeOf<"usage">` is what a UsageError takes. */
export type CodeOf<K extends ErrorKind> = {
  [C in ErrorCode]: K extends ErrorCodes[C] ? C : never;
}[ErrorCode];
