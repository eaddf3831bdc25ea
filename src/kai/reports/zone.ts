/**
 * The time zone answers count days in: a window's dates are those a reader in that zone sees on
 * the calendar, and "7 days before" keeps the wall-clock time across a daylight-saving change.
 */
export interface Zone {
  /** An IANA name (`Asia/Tokyo`), `UTC`, or a fixed offset (`+09:00`). */
  name: string;
  /** Minutes east of UTC at the instant `ms`. */
  offsetAt(ms: number): number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export const UTC: Zone = { name: "UTC", offsetAt: () => 0 };

function fixedOffset(text: string): Zone | null {
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const minutes = (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return minutes === 0 ? UTC : { name: text, offsetAt: () => minutes };
}

function ianaZone(name: string): Zone {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: name,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  return {
    name,
    offsetAt(ms: number): number {
      const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
      const local = Date.UTC(
        Number(parts.year),
        Number(parts.month) - 1,
        Number(parts.day),
        Number(parts.hour),
        Number(parts.minute),
        Number(parts.second),
      );
      return Math.round((local - Math.floor(ms / 1000) * 1000) / MINUTE_MS);
    },
  };
}

/**
 * The zone of an answer: the project's configured `timezone`, else the offset `as_of` was written
 * with (`…T00:00:00+09:00` counts days in +09:00), else UTC.
 */
export function answerZone(configured: string | undefined, asOf: string | undefined): Zone {
  if (configured !== undefined) return configured === "UTC" ? UTC : ianaZone(configured);
  const offset = asOf === undefined ? null : /([+-]\d{2}:\d{2})$/.exec(asOf);
  return (offset && fixedOffset(offset[1]!)) ?? UTC;
}

/** The calendar date (YYYY-MM-DD) of `at` in `zone`. */
export function localDate(at: Date, zone: Zone): string {
  return new Date(at.getTime() + zone.offsetAt(at.getTime()) * MINUTE_MS).toISOString().slice(0, 10);
}

/** The instant `days` calendar days before `at` in `zone`, at the same wall-clock time. */
export function daysBefore(at: Date, days: number, zone: Zone): Date {
  const wall = at.getTime() + zone.offsetAt(at.getTime()) * MINUTE_MS - days * DAY_MS;
  // The offset at the wall time read as UTC is a first guess; the offset at that guess settles it.
  const guess = wall - zone.offsetAt(wall) * MINUTE_MS;
  return new Date(wall - zone.offsetAt(guess) * MINUTE_MS);
}
