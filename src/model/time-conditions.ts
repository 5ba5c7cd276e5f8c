// What a time condition means, as data: its weekly ranges as minutes of the week (Monday 00:00 is
// minute 0), its dated exceptions as days, and which of open, closed or an exception holds at an
// instant in its time zone. The dialplan (GotoIfTime), the simulator, lint and impact lines all
// read a schedule through these functions, so they agree on what "open" means. Pure: an instant
// is always given, never read from a clock; time zones come from the ICU data Node ships.

import type { Weekday } from "./org-state.js";
import { type TimeCondition, type TimeException, type TimeRange, WEEKDAYS } from "./org-state.js";

/** An instant as `simulate --at` and `POST /simulate` take it: ISO 8601 with its offset or Z. */
export const ISO_INSTANT =
  "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,3})?)?(Z|[+-][0-9]{2}:[0-9]{2})$";

/** An ISO_INSTANT text as milliseconds since the epoch; undefined when it is not one. */
export function instantFromText(text: string): number | undefined {
  // Date.parse would roll 2026-02-30 over into March: the calendar day must exist.
  if (!new RegExp(ISO_INSTANT).test(text) || !isRealDate(text.slice(0, 10))) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

export const MINUTES_PER_DAY = 24 * 60;
export const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;
const MS_PER_DAY = 86_400_000;
/** The longest dated exception, in days: a holiday season, not a second calendar. */
export const MAX_EXCEPTION_DAYS = 366;

/** `09:30` -> 570; `24:00` -> 1440. The model's pattern has checked the form. */
export function minuteOfDay(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/** 570 -> `09:30`. */
export function timeOfDay(minute: number): string {
  const h = Math.floor(minute / 60);
  const m = minute % 60;
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
}

/** A stretch of the week, [start, end) in minutes of the week; end may pass the week's end. */
export interface WeekWindow {
  start: number;
  end: number;
}

/**
 * The open stretches of one range: one per day, from its start to its end, or into the next day
 * when the end is not after the start (22:00 to 06:00 closes on the following morning).
 */
export function rangeWindows(range: TimeRange): WeekWindow[] {
  const start = minuteOfDay(range.start);
  let end = minuteOfDay(range.end);
  if (end <= start) end += MINUTES_PER_DAY;
  return range.days.map((day) => {
    const base = WEEKDAYS.indexOf(day) * MINUTES_PER_DAY;
    return { start: base + start, end: base + end };
  });
}

/** Whether minute `m` of the week lies in `window` (a window may wrap past Sunday midnight). */
function inWindow(window: WeekWindow, m: number): boolean {
  return (
    (m >= window.start && m < window.end) ||
    (m + MINUTES_PER_WEEK >= window.start && m + MINUTES_PER_WEEK < window.end)
  );
}

/** The week, minute by minute: true where some range is open. */
export function openMinutes(tc: Pick<TimeCondition, "ranges">): boolean[] {
  const open = new Array<boolean>(MINUTES_PER_WEEK).fill(false);
  for (const range of tc.ranges) {
    for (const window of rangeWindows(range)) {
      for (let m = window.start; m < window.end; m++) open[m % MINUTES_PER_WEEK] = true;
    }
  }
  return open;
}

/** Whether the weekly ranges are open at minute `m` of the week. */
export function isOpenAt(tc: Pick<TimeCondition, "ranges">, m: number): boolean {
  return tc.ranges.some((range) => rangeWindows(range).some((w) => inWindow(w, m)));
}

/** `2026-12-25` as days since 1970-01-01 (UTC calendar arithmetic, no time zone involved). */
export function dayNumber(date: string): number {
  return (
    Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) /
    MS_PER_DAY
  );
}

/** Whether `date` (YYYY-MM-DD) names a day that exists (not 2026-02-30). */
export function isRealDate(date: string): boolean {
  const ms = dayNumber(date) * MS_PER_DAY;
  const d = new Intl.DateTimeFormat("en-CA", { timeZone: "UTC" }).format(ms);
  return d === date;
}

/** The weekday of day number `day` (1970-01-01 was a Thursday). */
export function weekdayOfDay(day: number): Weekday {
  return WEEKDAYS[(((day + 3) % 7) + 7) % 7]!;
}

/** An exception's last day: its end date, or its start date when it has none. */
export function lastDate(exception: TimeException): string {
  return exception.end_date ?? exception.start_date;
}

/** `20261225`: the number a dialplan compares the local date with. */
export function dateDigits(date: string): string {
  return date.replaceAll("-", "");
}

/** The IANA zones Node knows, with the aliases it resolves (UTC, Asia/Kolkata) accepted too. */
let zones: Set<string> | undefined;

/** Whether `name` is a time zone Node knows: canonical, or an alias of a canonical zone. */
export function isKnownTimeZone(name: string): boolean {
  zones ??= new Set(Intl.supportedValuesOf("timeZone"));
  if (zones.has(name)) return true;
  try {
    const resolved = new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
    return zones.has(resolved) || resolved === "UTC";
  } catch {
    return false;
  }
}

/** An instant as the wall clock of a time zone reads it. */
export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  weekday: Weekday;
  /** HH:MM */
  time: string;
  /** Minute of the week, Monday 00:00 = 0. */
  weekMinute: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock reading of `epochMs` in `timeZone` (daylight saving time included). */
export function localTime(epochMs: number, timeZone: string): LocalTime {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
    });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(epochMs).map((p) => [p.type, p.value]));
  const weekday = parts.weekday!.toLowerCase() as Weekday;
  const time = `${parts.hour}:${parts.minute}`;
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday,
    time,
    weekMinute: WEEKDAYS.indexOf(weekday) * MINUTES_PER_DAY + minuteOfDay(time),
  };
}

/** Which branch of a time condition a call takes. */
export type ScheduleBranch =
  | { branch: "open" }
  | { branch: "closed" }
  | { branch: "exception"; index: number; exception: TimeException };

/**
 * The branch at local time `local`: the first exception whose days include the date, else open
 * when a weekly range holds the minute, else closed (the dialplan checks in the same order).
 */
export function branchAt(tc: TimeCondition, local: LocalTime): ScheduleBranch {
  const index = tc.exceptions.findIndex(
    (e) => local.date >= e.start_date && local.date <= lastDate(e),
  );
  if (index >= 0) return { branch: "exception", index, exception: tc.exceptions[index]! };
  return isOpenAt(tc, local.weekMinute) ? { branch: "open" } : { branch: "closed" };
}

/** Days in order as people say them: `mon-fri`, `sat, sun`, `mon, wed-fri`. */
export function dayList(days: readonly Weekday[]): string {
  const indexes = [...new Set(days.map((d) => WEEKDAYS.indexOf(d)))].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < indexes.length; ) {
    let j = i;
    while (j + 1 < indexes.length && indexes[j + 1] === indexes[j]! + 1) j++;
    const first = WEEKDAYS[indexes[i]!]!;
    const last = WEEKDAYS[indexes[j]!]!;
    runs.push(i === j ? first : j === i + 1 ? `${first}, ${last}` : `${first}-${last}`);
    i = j + 1;
  }
  return runs.join(", ");
}

/** A range as a reader writes it: `mon-fri 09:00-17:00`. */
export function rangeText(range: TimeRange): string {
  return `${dayList(range.days)} ${range.start}-${range.end}`;
}

/** An exception as a reader writes it: `2026-12-24..2026-12-26 (Christmas)`. */
export function exceptionDays(exception: TimeException): string {
  const days =
    exception.end_date && exception.end_date !== exception.start_date
      ? `${exception.start_date}..${exception.end_date}`
      : exception.start_date;
  return exception.name ? `${days} (${exception.name})` : days;
}
