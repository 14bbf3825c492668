/**
 * Next-run tables for every schedule value: month ends, leap years, quarters,
 * time zones and daylight saving. Time is passed in (the injected clock's
 * `now`); nothing here reads the system clock.
 */
import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import type { Clock } from '../../src/domain/clock.js';
import { assertValidSchedule, isValidTimeZone, nextRunAfter, nextRunOnSave, runToPerformNow, type ScheduleSpec } from '../../src/domain/schedules/schedule.js';

function schedule(kind: ScheduleSpec['kind'], startTime: string, extra: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return { kind, startTime, disabled: false, ...extra };
}

/** A clock the test moves by hand. */
function fixedClock(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return { now: () => now, set: (next) => (now = new Date(next)) };
}

const iso = (date: Date | undefined) => date?.toISOString();

interface Row {
  name: string;
  spec: ScheduleSpec;
  after: string;
  lastRan?: string;
  expected: string | undefined;
}

function table(title: string, rows: Row[]): void {
  describe(title, () => {
    for (const row of rows) {
      it(row.name, () => {
        const lastRan = row.lastRan === undefined ? undefined : new Date(row.lastRan);
        expect(iso(nextRunAfter(row.spec, new Date(row.after), lastRan))).to.equal(row.expected);
      });
    }
  });
}

/** Follows a schedule run after run from `from`, as the controller does. */
function runs(spec: ScheduleSpec, from: string, count: number): Array<string | undefined> {
  const result: Array<string | undefined> = [];
  let after = new Date(from);
  for (let index = 0; index < count; index++) {
    const next = nextRunAfter(spec, after);
    result.push(iso(next));
    if (next === undefined) break;
    after = next;
  }
  return result;
}

describe('nextRunAfter', () => {
  table('ONCE', [
    {
      name: 'runs at its start time when asked before it',
      spec: schedule('ONCE', '2026-05-01T10:00:00Z'),
      after: '2026-04-30T00:00:00Z',
      expected: '2026-05-01T10:00:00.000Z',
    },
    { name: 'has no run strictly after its start time', spec: schedule('ONCE', '2026-05-01T10:00:00Z'), after: '2026-05-01T10:00:00Z', expected: undefined },
    {
      name: 'has no further run once it ran',
      spec: schedule('ONCE', '2026-05-01T10:00:00Z'),
      after: '2026-04-30T00:00:00Z',
      lastRan: '2026-04-30T00:00:00Z',
      expected: undefined,
    },
  ]);

  table('DAILY', [
    {
      name: 'first run is the start time when it is in the future',
      spec: schedule('DAILY', '2026-06-10T09:00:00Z'),
      after: '2026-06-01T00:00:00Z',
      expected: '2026-06-10T09:00:00.000Z',
    },
    {
      name: 'later the same day when the time of day has not passed',
      spec: schedule('DAILY', '2026-01-01T09:00:00Z'),
      after: '2026-01-15T08:59:59Z',
      expected: '2026-01-15T09:00:00.000Z',
    },
    {
      name: 'the next day when the time of day has passed',
      spec: schedule('DAILY', '2026-01-01T09:00:00Z'),
      after: '2026-01-15T09:00:00Z',
      expected: '2026-01-16T09:00:00.000Z',
    },
    { name: 'across a month end', spec: schedule('DAILY', '2026-01-01T09:00:00Z'), after: '2026-01-31T10:00:00Z', expected: '2026-02-01T09:00:00.000Z' },
    { name: 'across a year end', spec: schedule('DAILY', '2026-01-01T23:30:00Z'), after: '2026-12-31T23:30:00Z', expected: '2027-01-01T23:30:00.000Z' },
    {
      name: 'across Feb 29 of a leap year',
      spec: schedule('DAILY', '2028-01-01T06:00:00Z'),
      after: '2028-02-28T07:00:00Z',
      expected: '2028-02-29T06:00:00.000Z',
    },
    {
      name: 'never before its start time, even from long before it',
      spec: schedule('DAILY', '2027-03-01T09:00:00Z'),
      after: '2026-03-01T09:00:00Z',
      expected: '2027-03-01T09:00:00.000Z',
    },
    {
      name: 'strictly after lastRan when it is later than after',
      spec: schedule('DAILY', '2026-01-01T09:00:00Z'),
      after: '2026-01-10T00:00:00Z',
      lastRan: '2026-01-10T09:00:00Z',
      expected: '2026-01-11T09:00:00.000Z',
    },
  ]);

  table('DAILY in Europe/Berlin keeps 09:00 local across daylight saving (UTC+1 winter, UTC+2 summer)', [
    {
      name: 'winter: 09:00 local is 08:00Z',
      spec: schedule('DAILY', '2026-03-01T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-03-28T09:00:00Z',
      expected: '2026-03-29T07:00:00.000Z',
    },
    {
      name: 'the last winter day runs at 08:00Z',
      spec: schedule('DAILY', '2026-03-01T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-03-27T09:00:00Z',
      expected: '2026-03-28T08:00:00.000Z',
    },
    {
      name: 'summer: 09:00 local is 07:00Z',
      spec: schedule('DAILY', '2026-03-01T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-07-01T12:00:00Z',
      expected: '2026-07-02T07:00:00.000Z',
    },
    {
      name: 'back to winter after the October change: 08:00Z',
      spec: schedule('DAILY', '2026-03-01T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-10-25T08:00:00Z',
      expected: '2026-10-26T08:00:00.000Z',
    },
    {
      name: 'the October change day itself is already winter: 08:00Z',
      spec: schedule('DAILY', '2026-03-01T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-10-24T12:00:00Z',
      expected: '2026-10-25T08:00:00.000Z',
    },
    {
      name: '02:30 local does not exist on 29 March and is shifted forward by the gap to 03:30 local (01:30Z)',
      spec: schedule('DAILY', '2026-03-01T01:30:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-03-28T12:00:00Z',
      expected: '2026-03-29T01:30:00.000Z',
    },
    {
      name: '02:30 local happens twice on 25 October and runs once, at the first (00:30Z)',
      spec: schedule('DAILY', '2026-03-01T01:30:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-10-24T12:00:00Z',
      expected: '2026-10-25T00:30:00.000Z',
    },
    {
      name: 'and not again at the second 02:30 local',
      spec: schedule('DAILY', '2026-03-01T01:30:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-10-25T00:30:00Z',
      expected: '2026-10-26T01:30:00.000Z',
    },
  ]);

  table('DAILY in America/New_York keeps 09:00 local across daylight saving (UTC-5 winter, UTC-4 summer)', [
    {
      name: 'winter: 09:00 local is 14:00Z',
      spec: schedule('DAILY', '2026-01-05T14:00:00Z', { timeZone: 'America/New_York' }),
      after: '2026-03-07T15:00:00Z',
      expected: '2026-03-08T13:00:00.000Z',
    },
    {
      name: 'the day before the March change: 14:00Z',
      spec: schedule('DAILY', '2026-01-05T14:00:00Z', { timeZone: 'America/New_York' }),
      after: '2026-03-06T15:00:00Z',
      expected: '2026-03-07T14:00:00.000Z',
    },
    {
      name: 'after the November change: 14:00Z again',
      spec: schedule('DAILY', '2026-01-05T14:00:00Z', { timeZone: 'America/New_York' }),
      after: '2026-10-31T14:00:00Z',
      expected: '2026-11-01T14:00:00.000Z',
    },
    {
      name: '02:30 local does not exist on 8 March and runs at 03:30 local (07:30Z)',
      spec: schedule('DAILY', '2026-01-05T07:30:00Z', { timeZone: 'America/New_York' }),
      after: '2026-03-07T12:00:00Z',
      expected: '2026-03-08T07:30:00.000Z',
    },
    {
      name: 'a run late in the local evening is on the next UTC day',
      spec: schedule('DAILY', '2026-01-06T04:00:00Z', { timeZone: 'America/New_York' }),
      after: '2026-01-31T12:00:00Z',
      expected: '2026-02-01T04:00:00.000Z',
    },
  ]);

  table('WEEKLY', [
    {
      name: 'on the start time weekday, a week later',
      spec: schedule('WEEKLY', '2026-01-05T09:00:00Z'),
      after: '2026-01-05T09:00:00Z',
      expected: '2026-01-12T09:00:00.000Z',
    },
    {
      name: 'the same weekday later in the week',
      spec: schedule('WEEKLY', '2026-01-05T09:00:00Z'),
      after: '2026-01-07T00:00:00Z',
      expected: '2026-01-12T09:00:00.000Z',
    },
    {
      name: 'the same day when its time has not passed',
      spec: schedule('WEEKLY', '2026-01-05T09:00:00Z'),
      after: '2026-01-26T08:00:00Z',
      expected: '2026-01-26T09:00:00.000Z',
    },
    {
      name: 'across a month and a leap day',
      spec: schedule('WEEKLY', '2028-02-24T09:00:00Z'),
      after: '2028-02-24T09:00:00Z',
      expected: '2028-03-02T09:00:00.000Z',
    },
    {
      name: 'first run is the start time when it is in the future',
      spec: schedule('WEEKLY', '2026-09-01T09:00:00Z'),
      after: '2026-01-01T00:00:00Z',
      expected: '2026-09-01T09:00:00.000Z',
    },
    {
      name: 'keeps the local time across the Berlin spring change',
      spec: schedule('WEEKLY', '2026-03-23T08:00:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-03-23T08:00:00Z',
      expected: '2026-03-30T07:00:00.000Z',
    },
  ]);

  table('MONTHLY', [
    {
      name: 'from Jan 31 to Feb 29 in the leap year 2028',
      spec: schedule('MONTHLY', '2028-01-31T09:00:00Z'),
      after: '2028-01-31T09:00:00Z',
      expected: '2028-02-29T09:00:00.000Z',
    },
    {
      name: 'back to Mar 31 after a clamped February, without drifting',
      spec: schedule('MONTHLY', '2028-01-31T09:00:00Z'),
      after: '2028-02-29T09:00:00Z',
      expected: '2028-03-31T09:00:00.000Z',
    },
    { name: 'to Apr 30 from Mar 31', spec: schedule('MONTHLY', '2028-01-31T09:00:00Z'), after: '2028-03-31T09:00:00Z', expected: '2028-04-30T09:00:00.000Z' },
    {
      name: 'to Feb 28 in the non-leap year 2027',
      spec: schedule('MONTHLY', '2027-01-31T09:00:00Z'),
      after: '2027-01-31T09:00:00Z',
      expected: '2027-02-28T09:00:00.000Z',
    },
    {
      name: 'from the 30th to Feb 28, then Mar 30',
      spec: schedule('MONTHLY', '2027-01-30T09:00:00Z'),
      after: '2027-02-28T09:00:00Z',
      expected: '2027-03-30T09:00:00.000Z',
    },
    { name: 'across a year end', spec: schedule('MONTHLY', '2026-01-15T09:00:00Z'), after: '2026-12-20T00:00:00Z', expected: '2027-01-15T09:00:00.000Z' },
    {
      name: 'the same month when its day has not come',
      spec: schedule('MONTHLY', '2026-01-15T09:00:00Z'),
      after: '2026-06-14T00:00:00Z',
      expected: '2026-06-15T09:00:00.000Z',
    },
    {
      name: 'the day of month is the local one: Jan 31 00:30 Berlin (Jan 30 23:30Z) clamps to Feb 28 local',
      spec: schedule('MONTHLY', '2026-01-30T23:30:00Z', { timeZone: 'Europe/Berlin' }),
      after: '2026-02-01T00:00:00Z',
      expected: '2026-02-27T23:30:00.000Z',
    },
  ]);

  it('MONTHLY from Jan 31 walks a whole leap year on each month’s last day', () => {
    expect(runs(schedule('MONTHLY', '2028-01-31T09:00:00Z'), '2028-01-01T00:00:00Z', 13)).to.deep.equal([
      '2028-01-31T09:00:00.000Z',
      '2028-02-29T09:00:00.000Z',
      '2028-03-31T09:00:00.000Z',
      '2028-04-30T09:00:00.000Z',
      '2028-05-31T09:00:00.000Z',
      '2028-06-30T09:00:00.000Z',
      '2028-07-31T09:00:00.000Z',
      '2028-08-31T09:00:00.000Z',
      '2028-09-30T09:00:00.000Z',
      '2028-10-31T09:00:00.000Z',
      '2028-11-30T09:00:00.000Z',
      '2028-12-31T09:00:00.000Z',
      '2029-01-31T09:00:00.000Z',
    ]);
  });

  const quarterly = schedule('QUARTERLY', '2026-01-01T00:00:00Z', {
    scheduleDates: ['2026-11-15T06:00:00Z', '2026-02-15T06:00:00Z', '2026-08-15T06:00:00Z', '2026-05-15T06:00:00Z'],
  });
  table('QUARTERLY', [
    { name: 'the first of its dates after the start time', spec: quarterly, after: '2026-01-01T00:00:00Z', expected: '2026-02-15T06:00:00.000Z' },
    { name: 'the next quarter’s date', spec: quarterly, after: '2026-02-15T06:00:00Z', expected: '2026-05-15T06:00:00.000Z' },
    {
      name: 'across a year boundary, to the first quarter of the next year',
      spec: quarterly,
      after: '2026-11-15T06:00:00Z',
      expected: '2027-02-15T06:00:00.000Z',
    },
    { name: 'years later, the same month, day and time', spec: quarterly, after: '2030-07-01T00:00:00Z', expected: '2030-08-15T06:00:00.000Z' },
    {
      name: 'a Feb 29 date falls on Feb 28 in other years',
      spec: schedule('QUARTERLY', '2028-01-01T00:00:00Z', {
        scheduleDates: ['2028-02-29T06:00:00Z', '2028-05-15T06:00:00Z', '2028-08-15T06:00:00Z', '2028-11-15T06:00:00Z'],
      }),
      after: '2028-11-15T06:00:00Z',
      expected: '2029-02-28T06:00:00.000Z',
    },
    {
      name: 'never before its dates, even when the start time is earlier',
      spec: schedule('QUARTERLY', '2026-01-01T00:00:00Z', {
        scheduleDates: ['2029-02-15T06:00:00Z', '2029-05-15T06:00:00Z', '2029-08-15T06:00:00Z', '2029-11-15T06:00:00Z'],
      }),
      after: '2026-01-01T00:00:00Z',
      expected: '2029-02-15T06:00:00.000Z',
    },
    {
      name: 'not before its start time',
      spec: { ...quarterly, startTime: '2027-06-01T00:00:00Z' },
      after: '2026-01-01T00:00:00Z',
      expected: '2027-08-15T06:00:00.000Z',
    },
    {
      name: 'keeps the local time in a time zone across daylight saving',
      spec: schedule('QUARTERLY', '2026-01-01T00:00:00Z', {
        timeZone: 'Europe/Berlin',
        scheduleDates: ['2026-01-15T08:00:00Z', '2026-04-15T07:00:00Z', '2026-07-15T07:00:00Z', '2026-10-15T07:00:00Z'],
      }),
      after: '2026-10-15T07:00:00Z',
      expected: '2027-01-15T08:00:00.000Z',
    },
  ]);

  const custom = schedule('CUSTOM', '2026-01-01T00:00:00Z', { scheduleDates: ['2026-09-01T12:00:00Z', '2026-03-01T12:00:00Z', '2026-06-01T12:00:00Z'] });
  table('CUSTOM', [
    { name: 'the earliest of unsorted dates', spec: custom, after: '2026-01-01T00:00:00Z', expected: '2026-03-01T12:00:00.000Z' },
    { name: 'the next date after one ran', spec: custom, after: '2026-03-01T12:00:00Z', expected: '2026-06-01T12:00:00.000Z' },
    { name: 'the last date', spec: custom, after: '2026-06-01T12:00:00Z', expected: '2026-09-01T12:00:00.000Z' },
    { name: 'none once every date has passed', spec: custom, after: '2026-09-01T12:00:00Z', expected: undefined },
    {
      name: 'skips dates before its start time',
      spec: { ...custom, startTime: '2026-04-01T00:00:00Z' },
      after: '2026-01-01T00:00:00Z',
      expected: '2026-06-01T12:00:00.000Z',
    },
  ]);

  table('disabled', [
    {
      name: 'a disabled DAILY schedule has no next run',
      spec: schedule('DAILY', '2026-01-01T09:00:00Z', { disabled: true }),
      after: '2026-02-01T00:00:00Z',
      expected: undefined,
    },
    {
      name: 'a disabled ONCE schedule has no next run',
      spec: schedule('ONCE', '2026-05-01T10:00:00Z', { disabled: true }),
      after: '2026-04-01T00:00:00Z',
      expected: undefined,
    },
    {
      name: 're-enabled, the same schedule runs again, from now',
      spec: schedule('DAILY', '2026-01-01T09:00:00Z', { disabled: false }),
      after: '2026-02-01T00:00:00Z',
      expected: '2026-02-01T09:00:00.000Z',
    },
  ]);
});

describe('runToPerformNow: runs missed while down collapse to one', () => {
  it('a week of missed DAILY runs gives one run, the latest missed', () => {
    const clock = fixedClock('2026-01-10T12:00:00Z');
    const spec = schedule('DAILY', '2026-01-01T09:00:00Z');
    expect(iso(runToPerformNow(spec, clock.now(), new Date('2026-01-03T09:00:00Z')))).to.equal('2026-01-10T09:00:00.000Z');
    expect(iso(runToPerformNow(spec, clock.now(), clock.now()))).to.equal(undefined);
    expect(iso(nextRunAfter(spec, clock.now(), clock.now()))).to.equal('2026-01-11T09:00:00.000Z');
  });

  it('nothing is due when the last run is the latest scheduled one', () => {
    const spec = schedule('DAILY', '2026-01-01T09:00:00Z');
    expect(runToPerformNow(spec, new Date('2026-01-10T12:00:00Z'), new Date('2026-01-10T09:00:05Z'))).to.equal(undefined);
  });

  it('nothing is due before the start time', () => {
    expect(runToPerformNow(schedule('WEEKLY', '2026-02-01T09:00:00Z'), new Date('2026-01-10T12:00:00Z'))).to.equal(undefined);
  });

  it('a ONCE schedule missed while down runs once, then never again', () => {
    const spec = schedule('ONCE', '2026-05-01T10:00:00Z');
    expect(iso(runToPerformNow(spec, new Date('2026-05-03T00:00:00Z')))).to.equal('2026-05-01T10:00:00.000Z');
    expect(runToPerformNow(spec, new Date('2026-05-03T00:00:00Z'), new Date('2026-05-03T00:00:00Z'))).to.equal(undefined);
  });

  it('several missed CUSTOM dates give one run, the latest', () => {
    const spec = schedule('CUSTOM', '2026-01-01T00:00:00Z', { scheduleDates: ['2026-03-01T12:00:00Z', '2026-02-01T12:00:00Z', '2026-04-01T12:00:00Z'] });
    expect(iso(runToPerformNow(spec, new Date('2026-03-15T00:00:00Z'), new Date('2026-01-15T00:00:00Z')))).to.equal('2026-03-01T12:00:00.000Z');
  });

  it('a disabled schedule has nothing due', () => {
    expect(runToPerformNow(schedule('DAILY', '2026-01-01T09:00:00Z', { disabled: true }), new Date('2026-01-10T12:00:00Z'))).to.equal(undefined);
  });

  it('the controller loop with an injected clock runs once after downtime and then daily', () => {
    const clock = fixedClock('2026-01-01T00:00:00Z');
    const spec = schedule('DAILY', '2026-01-01T09:00:00Z', { timeZone: 'Europe/Berlin' });
    const performed: string[] = [];
    let lastRan: Date | undefined;
    const wake = () => {
      const due = runToPerformNow(spec, clock.now(), lastRan);
      if (due !== undefined) {
        performed.push(clock.now().toISOString());
        lastRan = clock.now();
      }
      return iso(nextRunAfter(spec, clock.now(), lastRan));
    };
    expect(wake()).to.equal('2026-01-01T09:00:00.000Z');
    clock.set('2026-01-01T09:00:00Z');
    expect(wake()).to.equal('2026-01-02T09:00:00.000Z');
    clock.set('2026-01-06T15:00:00Z'); // down for four days
    expect(wake()).to.equal('2026-01-07T09:00:00.000Z');
    expect(performed).to.deep.equal(['2026-01-01T09:00:00.000Z', '2026-01-06T15:00:00.000Z']);
  });
});

describe('nextRunOnSave: the start_time 5-minute rule', () => {
  const now = new Date('2026-03-10T12:00:00Z');

  it('uses a start time in the future as the next run', () => {
    expect(iso(nextRunOnSave(schedule('DAILY', '2026-03-11T09:00:00Z'), now, { startTimeSent: true }))).to.equal('2026-03-11T09:00:00.000Z');
  });

  it('uses a start time no more than 5 minutes in the past as the next run', () => {
    expect(iso(nextRunOnSave(schedule('DAILY', '2026-03-10T11:55:00Z'), now, { startTimeSent: true }))).to.equal('2026-03-10T11:55:00.000Z');
  });

  it('recalculates when the start time is more than 5 minutes in the past', () => {
    expect(iso(nextRunOnSave(schedule('DAILY', '2026-03-10T11:54:59Z'), now, { startTimeSent: true }))).to.equal('2026-03-11T11:54:59.000Z');
  });

  it('recalculates when the start time was not sent (kept from before)', () => {
    expect(iso(nextRunOnSave(schedule('DAILY', '2026-03-10T11:58:00Z'), now, { startTimeSent: false }))).to.equal('2026-03-11T11:58:00.000Z');
  });

  it('a disabled schedule has no next run', () => {
    expect(nextRunOnSave(schedule('DAILY', '2026-03-11T09:00:00Z', { disabled: true }), now, { startTimeSent: true })).to.equal(undefined);
  });
});

describe('assertValidSchedule', () => {
  const quarter = (month: string) => `2026-${month}-15T06:00:00Z`;
  const refusals: Array<{ name: string; spec: ScheduleSpec; message: RegExp }> = [
    {
      name: 'CUSTOM without dates',
      spec: schedule('CUSTOM', '2026-01-01T00:00:00Z'),
      message: /schedule_dates must list 1 to 100 date-times when schedule is CUSTOM; it lists 0/,
    },
    {
      name: 'CUSTOM with 101 dates',
      spec: schedule('CUSTOM', '2026-01-01T00:00:00Z', {
        scheduleDates: Array.from({ length: 101 }, (_, day) => new Date(Date.UTC(2026, 0, day + 1)).toISOString()),
      }),
      message: /1 to 100 .* it lists 101/,
    },
    {
      name: 'CUSTOM with a date that is not a date-time',
      spec: schedule('CUSTOM', '2026-01-01T00:00:00Z', { scheduleDates: ['next tuesday'] }),
      message: /'next tuesday' is not an ISO 8601 date-time/,
    },
    {
      name: 'QUARTERLY with 3 dates',
      spec: schedule('QUARTERLY', '2026-01-01T00:00:00Z', { scheduleDates: [quarter('02'), quarter('05'), quarter('08')] }),
      message: /exactly 4 date-times, one in each calendar quarter.*it lists 3/,
    },
    {
      name: 'QUARTERLY with two dates in one quarter',
      spec: schedule('QUARTERLY', '2026-01-01T00:00:00Z', { scheduleDates: [quarter('01'), quarter('02'), quarter('05'), quarter('08')] }),
      message: /none falls in Q4/,
    },
    {
      name: 'an unknown time zone',
      spec: schedule('DAILY', '2026-01-01T00:00:00Z', { timeZone: 'Mars/Olympus_Mons' }),
      message: /'Mars\/Olympus_Mons' is not a valid IANA time zone/,
    },
    {
      name: 'an offset instead of a time zone',
      spec: schedule('DAILY', '2026-01-01T00:00:00Z', { timeZone: '+01:00' }),
      message: /not a valid IANA time zone/,
    },
    {
      name: 'a start time without an offset',
      spec: schedule('DAILY', '2026-01-01T09:00:00'),
      message: /start_time must be an ISO 8601 date-time with a time zone offset/,
    },
  ];
  for (const { name, spec, message } of refusals) {
    it(`refuses ${name} with an InvalidRequestError that says what to change`, () => {
      expect(() => assertValidSchedule(spec)).to.throw(InvalidRequestError, message);
      expect(() => nextRunAfter(spec, new Date('2026-01-01T00:00:00Z'))).to.throw(InvalidRequestError);
    });
  }

  it('judges a QUARTERLY date’s quarter in the schedule’s time zone', () => {
    const dates = ['2026-03-31T23:30:00Z', '2026-05-15T06:00:00Z', '2026-08-15T06:00:00Z', '2026-11-15T06:00:00Z'];
    expect(() => assertValidSchedule(schedule('QUARTERLY', '2026-01-01T00:00:00Z', { scheduleDates: dates }))).to.not.throw();
    expect(() => assertValidSchedule(schedule('QUARTERLY', '2026-01-01T00:00:00Z', { scheduleDates: dates, timeZone: 'Europe/Berlin' }))).to.throw(
      InvalidRequestError,
      /Q1/,
    );
  });

  it('ignores schedule_dates for kinds that do not use them', () => {
    expect(() => assertValidSchedule(schedule('DAILY', '2026-01-01T00:00:00Z', { scheduleDates: ['nonsense'] }))).to.not.throw();
  });

  it('accepts IANA zones and UTC', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'])
      expect(isValidTimeZone(zone), zone).to.equal(true);
  });
});
