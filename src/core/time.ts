import { UsageError } from "./errors.js";

/** ISO 8601 date-time with an explicit zone (Z or ±hh:mm), as the blackboard spec requires. */
export const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function isIsoWithZone(s: string): boolean {
  return ISO_WITH_ZONE.test(s) && !Number.isNaN(Date.parse(s));
}

export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}

/** Parse a user-given date (ISO 8601; a bare date means midnight UTC) or throw a usage error naming the flag. */
export function parseDateInput(value: string, what: string): Date {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) {
    throw new UsageError("invalid_date", `${what}: "${value}" is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z)`);
  }
  return new Date(ms);
}
