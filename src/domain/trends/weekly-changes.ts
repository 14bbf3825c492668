/**
 * Risks opened and closed per week, for the dashboard's trend. Weeks start on
 * Monday 00:00 UTC: the dashboard shows every time in UTC, so a week in the
 * chart is the same week a reader sees in the tables. Pure: the caller passes
 * the time it reasons about.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const WEEK_MS = 7 * DAY_MS;

/** What scans recorded on one UTC day (YYYY-MM-DD): risks they saw first and risks they closed. */
export interface DailyChanges {
  day: string;
  opened: number;
  closed: number;
}

export interface WeeklyChanges {
  /** The week's Monday, YYYY-MM-DD. */
  weekStart: string;
  opened: number;
  closed: number;
}

/** Monday 00:00 UTC of the week `at` falls in. */
export function weekStartOf(at: Date): Date {
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const daysSinceMonday = (at.getUTCDay() + 6) % 7;
  return new Date(midnight - daysSinceMonday * DAY_MS);
}

/** The first instant of the `count` weeks ending with the current one. */
export function trendStart(now: Date, count: number): Date {
  return new Date(weekStartOf(now).getTime() - (count - 1) * WEEK_MS);
}

/** The last `count` weeks up to and including `now`'s, oldest first, with the days' changes summed into them; days outside are ignored. */
export function weeklyChanges(days: readonly DailyChanges[], now: Date, count: number): WeeklyChanges[] {
  const first = trendStart(now, count).getTime();
  const weeks = Array.from({ length: count }, (_, index) => ({ weekStart: isoDay(first + index * WEEK_MS), opened: 0, closed: 0 }));
  for (const day of days) {
    const index = Math.floor((Date.parse(`${day.day}T00:00:00Z`) - first) / WEEK_MS);
    const week = weeks[index];
    if (index < 0 || week === undefined) continue;
    week.opened += day.opened;
    week.closed += day.closed;
  }
  return weeks;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
