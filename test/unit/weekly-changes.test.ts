import { expect } from 'chai';
import { trendStart, weekStartOf, weeklyChanges } from '../../src/domain/trends/weekly-changes.js';

describe('weekly risk changes', () => {
  it('puts every instant of a week on its Monday 00:00 UTC', () => {
    expect(weekStartOf(new Date('2026-11-25T00:40:00Z')).toISOString()).to.equal('2026-11-23T00:00:00.000Z'); // a Wednesday
    expect(weekStartOf(new Date('2026-11-23T00:00:00Z')).toISOString()).to.equal('2026-11-23T00:00:00.000Z'); // Monday itself
    expect(weekStartOf(new Date('2026-11-29T23:59:59Z')).toISOString()).to.equal('2026-11-23T00:00:00.000Z'); // Sunday night
    expect(weekStartOf(new Date('2027-01-01T12:00:00Z')).toISOString()).to.equal('2026-12-28T00:00:00.000Z'); // across a year
  });

  it('starts the trend eleven weeks before the current week for twelve weeks', () => {
    expect(trendStart(new Date('2026-11-25T10:00:00Z'), 12).toISOString()).to.equal('2026-09-07T00:00:00.000Z');
  });

  it('sums days into their weeks, oldest first, with empty weeks as zeros and days outside left out', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    const weeks = weeklyChanges(
      [
        { day: '2026-09-06', opened: 100, closed: 100 }, // the Sunday before the first week
        { day: '2026-09-07', opened: 3, closed: 1 },
        { day: '2026-09-13', opened: 2, closed: 0 },
        { day: '2026-11-23', opened: 5, closed: 4 },
        { day: '2026-11-30', opened: 100, closed: 100 }, // next week
      ],
      now,
      12,
    );
    expect(weeks).to.have.length(12);
    expect(weeks[0]).to.deep.equal({ weekStart: '2026-09-07', opened: 5, closed: 1 });
    expect(weeks.slice(1, 11).every((week) => week.opened === 0 && week.closed === 0)).to.equal(true);
    expect(weeks[11]).to.deep.equal({ weekStart: '2026-11-23', opened: 5, closed: 4 });
    expect(weeks.map((week) => week.weekStart)).to.include('2026-10-26'); // the week daylight saving ends in Europe is still seven days in UTC
  });
});
