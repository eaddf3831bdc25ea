import { UsageError } from "./errors.js";

/** ISO 8601 date-time with an explicit zone (Z or ±hh:mm), as the blackboard spec requires. */
export const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function isIsoWithZone(s: string): boolean {
  return ISO_WITH_ZONE.test(s) && isRealDateTime(s) && !Number.isNaN(Date.parse(s));
}

const FIELDS = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))?)?$/;

/**
 * Whether an ISO 8601 date or date-time names a real moment: Date.parse rolls 2026-02-30 over to
 * March 2 and takes hour 24, so the fields are checked against the calendar (the day against its
 * month, leap years included) and the clock (hours 0–23, minutes and seconds 0–59, zone offsets
 * up to 23:59).
 */
export function isRealDateTime(s: string): boolean {
  const m = FIELDS.exec(s);
  if (!m) return false;
  if (!isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  const within = (v: string | undefined, max: number) => v === undefined || Number(v) <= max;
  return within(m[4], 23) && within(m[5], 59) && within(m[6], 59) && within(m[7], 23) && within(m[8], 59);
}

function isRealDate(year: number, month: number, day: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}

/** Parse a user-given date (ISO 8601; a bare date means midnight UTC) or throw a usage error naming the flag. */
export function parseDateInput(value: string, what: string): Date {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  // A date in ISO form must also be a real one (Date.parse takes 2026-02-30 as March 2).
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (Number.isNaN(ms) || (date && !isRealDate(Number(date[1]), Number(date[2]), Number(date[3]))) || (FIELDS.test(value) && !isRealDateTime(value))) {
    throw new UsageError("invalid_date", `${what}: "${value}" is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z)`);
  }
  return new Date(ms);
}
