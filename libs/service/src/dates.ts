// Dates and times as the pages show them: in the organization's time zone, never the server's.
// Organizations sell in Taiwan, so the zone is Asia/Taipei unless a page is told another.
//
// - A time of day: `2026-03-01 18:00 (GMT+8)`: year-month-day and 24-hour time, digits the same
//   in every language (they sort, and read the same in Taipei and anywhere else), then the zone
//   as its offset from UTC at that instant (`GMT-5`, `GMT-4` in summer, `GMT+5:30`, `UTC` for
//   none). Traditional Chinese puts the zone in full-width parentheses: `2026-03-01 18:00（GMT+8）`.
// - A calendar day: the day in the zone, in the words of the page's language: `23 Dec 2026`
//   (or `23 December 2026`), `2026年12月23日`. It names no zone: a day has no hour to mistake.

/** The languages the pages are written in. */
export type PageLanguage = 'zh-TW' | 'en';

/** Where an organization's dates are shown when it names no other zone. */
export const DEFAULT_TIME_ZONE = 'Asia/Taipei';

export interface DateOptions {
  /** An IANA zone: `Asia/Taipei` (the default), `America/New_York`, `UTC`. */
  timeZone?: string;
  /** The page's language; English when absent. */
  lang?: PageLanguage;
}

const formats = new Map<string, Intl.DateTimeFormat>();
const formatOf = (key: string, make: () => Intl.DateTimeFormat) => {
  let format = formats.get(key);
  if (!format) formats.set(key, (format = make()));
  return format;
};

/** The instant, or null when the text is no date (shown as it came rather than failing the page). */
function instantOf(value: string | Date): Date | null {
  const instant = value instanceof Date ? value : new Date(value);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

/** The wall clock in the zone at that instant, and the zone's offset from UTC then, in minutes. */
function wallClock(instant: Date, timeZone: string) {
  const format = formatOf(
    `clock ${timeZone}`,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }),
  );
  const parts = Object.fromEntries(format.formatToParts(instant).map((part) => [part.type, part.value]));
  const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map((type) =>
    Number(parts[type]),
  ) as [number, number, number, number, number, number];
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const offsetMinutes = Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
  return { year, month, day, hour, minute, offsetMinutes };
}

const two = (n: number) => String(n).padStart(2, '0');

/** `GMT+8`, `GMT-5`, `GMT+5:30`, `UTC`. */
function offsetName(minutes: number): string {
  if (minutes === 0) return 'UTC';
  const sign = minutes < 0 ? '-' : '+';
  const hours = Math.floor(Math.abs(minutes) / 60);
  const rest = Math.abs(minutes) % 60;
  return `GMT${sign}${hours}${rest ? `:${two(rest)}` : ''}`;
}

/**
 * An instant as a date and a time of day in the zone, with the zone:
 * `2026-03-01 18:00 (GMT+8)` (English), `2026-03-01 18:00（GMT+8）` (Traditional Chinese).
 */
export function formatDateTime(
  value: string | Date,
  { timeZone = DEFAULT_TIME_ZONE, lang = 'en' }: DateOptions = {},
): string {
  const instant = instantOf(value);
  if (!instant) return String(value);
  const { year, month, day, hour, minute, offsetMinutes } = wallClock(instant, timeZone);
  const zone = offsetName(offsetMinutes);
  return `${year}-${two(month)}-${two(day)} ${two(hour)}:${two(minute)}${lang === 'zh-TW' ? `（${zone}）` : ` (${zone})`}`;
}

/**
 * An instant as the calendar day it falls on in the zone, as the page's language writes it:
 * `23 Dec 2026` (`23 December 2026` with `month: 'long'`), `2026年12月23日`.
 */
export function formatDate(
  value: string | Date,
  { timeZone = DEFAULT_TIME_ZONE, lang = 'en', month = 'short' }: DateOptions & { month?: 'short' | 'long' } = {},
): string {
  const instant = instantOf(value);
  if (!instant) return String(value);
  const locale = lang === 'zh-TW' ? 'zh-TW' : 'en-GB';
  return formatOf(
    `day ${locale} ${month} ${timeZone}`,
    () => new Intl.DateTimeFormat(locale, { timeZone, year: 'numeric', month, day: 'numeric' }),
  ).format(instant);
}
