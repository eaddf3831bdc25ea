import { UsageError } from "./errors.js";

/** ISO 8601 date-time with an explicit zone (Z or ±hh:mm), as the blackboard spec requires. */
export const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function isIsoWithZone(s: string): boolean {
  const quick = utcSecondsCheck(s);
  if (quick !== null) return quick;
  return ISO_WITH_ZONE.test(s) && isRealDateTime(s) && !Number.isNaN(Date.parse(s));
}

/** Two ASCII digits at `i` as a number, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 0x30;
  const b = s.charCodeAt(i + 1) - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * isIsoWithZone for the form nearly every timestamp has (`YYYY-MM-DDTHH:MM:SS[.f…]Z`, what
 * toISOString writes), without a regular expression or Date.parse (every such date-time parses):
 * true or false, or null for any other form (the full check decides). Events are checked by the
 * million, so this is on the ingest path.
 */
function utcSecondsCheck(s: string): boolean | null {
  const n = s.length;
  if (n < 20 || n > 30 || s.charCodeAt(n - 1) !== 0x5a) return null;
  if (
    s.charCodeAt(4) !== 0x2d ||
    s.charCodeAt(7) !== 0x2d ||
    s.charCodeAt(10) !== 0x54 ||
    s.charCodeAt(13) !== 0x3a ||
    s.charCodeAt(16) !== 0x3a
  )
    return null;
  if (n === 20) {
    // no fraction
  } else if (s.charCodeAt(19) === 0x2e && n >= 22) {
    for (let i = 20; i < n - 1; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return null;
    }
  } else return null;
  const hi = two(s, 0);
  const lo = two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  if (hi < 0 || lo < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  return isRealDate(hi * 100 + lo, month, day) && hour <= 23 && minute <= 59 && second <= 59;
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
  if (
    Number.isNaN(ms) ||
    (date && !isRealDate(Number(date[1]), Number(date[2]), Number(date[3]))) ||
    (FIELDS.test(value) && !isRealDateTime(value))
  ) {
    throw new UsageError(
      "invalid_date",
      `${what}: "${value}" is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z)`,
    );
  }
  return new Date(ms);
}
