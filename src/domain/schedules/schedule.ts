/**
 * When a ScheduledScan runs (DESIGN.md decision 9: schedules are data). Pure:
 * every function takes the time it reasons about; nothing here reads a clock.
 *
 * Semantics:
 * - `startTime` is an instant. Its wall-clock time in `timeZone` (default UTC)
 *   is what repeats, so 09:00 Europe/Berlin stays 09:00 local across daylight
 *   saving changes (08:00Z in winter, 07:00Z in summer).
 * - ONCE, DAILY, WEEKLY and MONTHLY run first at `startTime`, then repeat from
 *   it. MONTHLY keeps the start's day of month and clamps it to shorter months
 *   without drifting (Jan 31 -> Feb 28/29 -> Mar 31).
 * - QUARTERLY repeats the month, day and time of its four dates every year,
 *   each from its own date on (Feb 29 falls on Feb 28 in other years). CUSTOM
 *   runs on its dates only. For both, `startTime` is the earliest moment a run
 *   may happen, not a run of its own.
 * - A local time that does not exist (the spring-forward gap) is shifted
 *   forward by the length of the gap: 02:30 on the night Berlin moves from
 *   02:00 to 03:00 runs at 03:30 local. A local time that exists twice (the
 *   autumn overlap) runs once, at its first occurrence.
 * - Missed runs collapse: after downtime the controller performs the single run
 *   `runToPerformNow` returns (the latest one missed), then asks
 *   `nextRunAfter(spec, now)`, which never returns a time in the past.
 * - `disabled` keeps the schedule but yields no runs; on re-enabling, the next
 *   run is recalculated from now (runs missed while disabled are not caught up).
 */
import { z } from 'zod';
import { InvalidRequestError } from '../errors.js';

export const SCHEDULE_KINDS = ['ONCE', 'DAILY', 'WEEKLY', 'MONTHLY', 'QUARTERLY', 'CUSTOM'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

export interface ScheduleSpec {
  kind: ScheduleKind;
  /** ISO 8601 date-time with an offset. */
  startTime: string;
  /** Required for CUSTOM (1 to 100) and QUARTERLY (exactly 4, one per quarter); ignored otherwise. */
  scheduleDates?: string[];
  /** IANA time zone; UTC when absent. */
  timeZone?: string;
  disabled: boolean;
}

export const SCHEDULE_LIMITS = { maxCustomDates: 100, quarterlyDates: 4 } as const;

/** SPEC.md: a start_time no more than 5 minutes in the past is still used as the next run. */
const START_TIME_GRACE_MS = 5 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** start_time and schedule_dates fall in these years: outside them no schedule means anything, and far dates cost the run arithmetic. */
const SCHEDULE_YEARS = { first: 2000, last: 2199 } as const;

/** Date.UTC without its quirk of reading years 0 to 99 as 1900 to 1999. */
function utc(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0, millisecond = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}
const DateTime = z.iso.datetime({ offset: true });

// ---------------------------------------------------------------------------
// Validation

export function isValidTimeZone(zone: string): boolean {
  // Offsets such as +01:00 are not IANA names and would not follow DST.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return false;
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}

function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string' || !DateTime.safeParse(value).success || Number.isNaN(Date.parse(value))) return false;
  const year = new Date(value).getUTCFullYear();
  return year >= SCHEDULE_YEARS.first && year <= SCHEDULE_YEARS.last;
}

/** Throws InvalidRequestError naming what to change; returns nothing when the schedule is usable. */
export function assertValidSchedule(spec: ScheduleSpec): void {
  if (!(SCHEDULE_KINDS as readonly string[]).includes(spec.kind)) {
    throw new InvalidRequestError(`schedule must be one of ${SCHEDULE_KINDS.join(', ')}.`);
  }
  if (!isDateTime(spec.startTime)) {
    throw new InvalidRequestError(
      `start_time must be an ISO 8601 date-time with a time zone offset in the years ${SCHEDULE_YEARS.first} to ${SCHEDULE_YEARS.last}, such as 2026-01-31T09:00:00Z.`,
    );
  }
  if (spec.timeZone !== undefined && !isValidTimeZone(spec.timeZone)) {
    throw new InvalidRequestError(`time_zone '${spec.timeZone}' is not a valid IANA time zone; use a name such as Europe/Berlin or UTC.`);
  }
  if (spec.kind === 'CUSTOM') assertCustomDates(spec.scheduleDates);
  if (spec.kind === 'QUARTERLY') assertQuarterlyDates(spec.scheduleDates, zoneOf(spec));
}

function assertCustomDates(dates: string[] | undefined): void {
  const count = dates?.length ?? 0;
  if (count < 1 || count > SCHEDULE_LIMITS.maxCustomDates) {
    throw new InvalidRequestError(`schedule_dates must list 1 to ${SCHEDULE_LIMITS.maxCustomDates} date-times when schedule is CUSTOM; it lists ${count}.`);
  }
  assertDateTimes(dates!);
}

function assertQuarterlyDates(dates: string[] | undefined, zone: string): void {
  const count = dates?.length ?? 0;
  if (count !== SCHEDULE_LIMITS.quarterlyDates) {
    throw new InvalidRequestError(
      `schedule_dates must list exactly 4 date-times, one in each calendar quarter, when schedule is QUARTERLY; it lists ${count}.`,
    );
  }
  assertDateTimes(dates!);
  const quarters = new Set(dates!.map((date) => calendarQuarterOf(date, zone)));
  if (quarters.size !== SCHEDULE_LIMITS.quarterlyDates) {
    const missing = [1, 2, 3, 4].filter((quarter) => !quarters.has(quarter)).map((quarter) => `Q${quarter}`);
    throw new InvalidRequestError(
      `schedule_dates must have one date in each calendar quarter when schedule is QUARTERLY; none falls in ${missing.join(', ')}.`,
    );
  }
}

/** 1 to 4: the calendar quarter a date-time falls in, in `zone`. */
export function calendarQuarterOf(dateTime: string, zone = 'UTC'): number {
  return Math.floor((wallTimeAt(zone, Date.parse(dateTime)).month - 1) / 3) + 1;
}

function assertDateTimes(dates: string[]): void {
  const invalid = dates.find((date) => !isDateTime(date));
  if (invalid !== undefined) {
    throw new InvalidRequestError(
      `schedule_dates item '${String(invalid)}' is not an ISO 8601 date-time with a time zone offset in the years ${SCHEDULE_YEARS.first} to ${SCHEDULE_YEARS.last}, such as 2026-03-31T09:00:00Z.`,
    );
  }
}

// ---------------------------------------------------------------------------
// Runs

/**
 * The first run strictly after `after` (and after `lastRan`, when given), or
 * undefined when there is none: disabled, ONCE already ran, CUSTOM dates used up.
 */
export function nextRunAfter(spec: ScheduleSpec, after: Date, lastRan?: Date): Date | undefined {
  assertValidSchedule(spec);
  if (spec.disabled) return undefined;
  if (spec.kind === 'ONCE' && lastRan !== undefined) return undefined;
  const floor = Math.max(after.getTime(), lastRan?.getTime() ?? Number.NEGATIVE_INFINITY);
  const next = runsAround(spec, Math.max(floor, earliestRun(spec) - 1)).find((run) => run > floor);
  return next === undefined ? undefined : new Date(next);
}

/**
 * The single run to perform at `now` for every run missed since `lastRan`
 * (downtime collapses to one run): the latest scheduled time at or before
 * `now` that has not run yet, or undefined when nothing is due.
 */
export function runToPerformNow(spec: ScheduleSpec, now: Date, lastRan?: Date): Date | undefined {
  assertValidSchedule(spec);
  if (spec.disabled) return undefined;
  if (spec.kind === 'ONCE' && lastRan !== undefined) return undefined;
  const due = runsAround(spec, now.getTime())
    .filter((run) => run <= now.getTime())
    .at(-1);
  if (due === undefined || (lastRan !== undefined && lastRan.getTime() >= due)) return undefined;
  return new Date(due);
}

/**
 * The next run to store when a ScheduledScan is created or updated (SPEC.md):
 * a start_time that was sent and is no more than 5 minutes in the past is used
 * as is (when it is a run of the schedule); otherwise the next run is
 * recalculated from `now`.
 */
export function nextRunOnSave(spec: ScheduleSpec, now: Date, options: { startTimeSent: boolean; lastRan?: Date }): Date | undefined {
  assertValidSchedule(spec);
  if (spec.disabled) return undefined;
  const start = Date.parse(spec.startTime);
  const startIsARun = spec.kind !== 'QUARTERLY' && spec.kind !== 'CUSTOM';
  if (options.startTimeSent && startIsARun && start >= now.getTime() - START_TIME_GRACE_MS) return new Date(start);
  return nextRunAfter(spec, now, options.lastRan);
}

function zoneOf(spec: ScheduleSpec): string {
  return spec.timeZone ?? 'UTC';
}

/** No run happens before this instant. */
function earliestRun(spec: ScheduleSpec): number {
  const start = Date.parse(spec.startTime);
  if (spec.kind !== 'QUARTERLY') return start;
  return Math.max(start, Math.min(...spec.scheduleDates!.map((date) => Date.parse(date))));
}

/**
 * The runs in a window around `pivot`, sorted: wide enough to hold the last
 * run at or before `pivot` and the first one after it.
 */
function runsAround(spec: ScheduleSpec, pivot: number): number[] {
  const zone = zoneOf(spec);
  const start = Date.parse(spec.startTime);
  const runs = candidateRuns(spec, zone, start, wallTimeAt(zone, pivot));
  return [...new Set(runs.filter((run) => run >= start))].sort((a, b) => a - b);
}

function candidateRuns(spec: ScheduleSpec, zone: string, start: number, around: WallTime): number[] {
  const anchor = wallTimeAt(zone, start);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
  switch (spec.kind) {
    case 'ONCE':
      return [start];
    case 'DAILY':
      return range(-2, 2).map((days) => instantOf(zone, { ...anchor, ...addDays(around, days) }));
    case 'WEEKLY': {
      const week = Math.floor(daysBetween(anchor, around) / 7);
      return range(week - 1, week + 1).map((weeks) => instantOf(zone, { ...anchor, ...addDays(anchor, 7 * weeks) }));
    }
    case 'MONTHLY': {
      const month = (around.year - anchor.year) * 12 + (around.month - anchor.month);
      return range(month - 1, month + 1).map((months) => instantOf(zone, { ...anchor, ...addMonthsClamped(anchor, months, anchor.day) }));
    }
    case 'QUARTERLY':
      return spec.scheduleDates!.flatMap((date) => yearlyRuns(zone, Date.parse(date), range(around.year - 1, around.year + 1)));
    case 'CUSTOM':
      return spec.scheduleDates!.map((date) => Date.parse(date));
  }
}

/** The date's month, day and time in each of `years`, from the date itself on. */
function yearlyRuns(zone: string, date: number, years: number[]): number[] {
  const wall = wallTimeAt(zone, date);
  return years.map((year) => instantOf(zone, { ...wall, ...addMonthsClamped(wall, (year - wall.year) * 12, wall.day) })).filter((run) => run >= date);
}

// ---------------------------------------------------------------------------
// Civil dates and time zones (Intl only; no libraries)

interface CivilDate {
  year: number;
  month: number; // 1..12
  day: number;
}

interface WallTime extends CivilDate {
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

function civilDate(utcMidnight: number): CivilDate {
  const date = new Date(utcMidnight);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function addDays(date: CivilDate, days: number): CivilDate {
  return civilDate(utc(date.year, date.month - 1, date.day + days));
}

function daysBetween(from: CivilDate, to: CivilDate): number {
  return Math.round((utc(to.year, to.month - 1, to.day) - utc(from.year, from.month - 1, from.day)) / DAY_MS);
}

function daysInMonth(year: number, month: number): number {
  return new Date(utc(year, month, 0)).getUTCDate();
}

/** `months` after `date`'s month, on `day` or the month's last day when it is shorter. */
function addMonthsClamped(date: CivilDate, months: number, day: number): CivilDate {
  const first = civilDate(utc(date.year, date.month - 1 + months, 1));
  return { ...first, day: Math.min(day, daysInMonth(first.year, first.month)) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

function wallTimeAt(zone: string, instant: number): WallTime {
  const parts = formatterFor(zone).formatToParts(new Date(instant));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((candidate) => candidate.type === type)!.value);
  return {
    year: part('year'),
    month: part('month'),
    day: part('day'),
    hour: part('hour'),
    minute: part('minute'),
    second: part('second'),
    millisecond: ((instant % 1000) + 1000) % 1000,
  };
}

function wallAsUtc(wall: WallTime): number {
  return utc(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond);
}

function offsetAt(zone: string, instant: number): number {
  return wallAsUtc(wallTimeAt(zone, instant)) - instant;
}

/**
 * The instant a wall-clock time happens in `zone`. The zone's offsets a day
 * either side cover any single transition: a time valid under one of them is
 * exact (the earlier one wins in the autumn overlap); a time valid under
 * neither is in the spring gap and moves forward by the gap.
 */
function instantOf(zone: string, wall: WallTime): number {
  const local = wallAsUtc(wall);
  const offsets = [...new Set([offsetAt(zone, local - DAY_MS), offsetAt(zone, local + DAY_MS)])];
  const exact = offsets.map((offset) => local - offset).filter((instant) => wallAsUtc(wallTimeAt(zone, instant)) === local);
  if (exact.length > 0) return Math.min(...exact);
  return local - Math.min(...offsets);
}
