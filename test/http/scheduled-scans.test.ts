/**
 * /v1/scans/scheduled over HTTP against the real service, with a clock the
 * test sets: next_run is checked against it exactly.
 */
import { expect } from 'chai';
import type { Clock } from '../../src/domain/clock.js';
import { TestService, type TestResponse } from '../support/test-service.js';

const NOW = '2026-03-10T12:00:00.000Z';
const clock: Clock & { current: Date } = { current: new Date(NOW), now: () => new Date(clock.current) };
const minutesAgo = (minutes: number) => new Date(clock.current.getTime() - minutes * 60_000).toISOString();
const QUARTERLY_DATES = ['2026-02-15T08:00:00.000Z', '2026-05-15T08:00:00.000Z', '2026-08-15T08:00:00.000Z', '2026-11-15T08:00:00.000Z'];

let service: TestService;

const valid = (overrides: Record<string, unknown> = {}) => ({
  schedule: 'DAILY',
  scan_types: ['NMAP'],
  filter_set: { tags: ['prod'] },
  email_notification: 'NEVER',
  ...overrides,
});

function expectError(response: TestResponse, status: number, message: RegExp): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error).to.match(message);
}

async function create(body: Record<string, unknown>, key?: string) {
  const response = await service.post('/v1/scans/scheduled', body, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

describe('scheduled scans API', function () {
  before(async () => {
    service = await TestService.start({ clock, env: { VIGIL_RATE_LIMIT_BURST: '100000' } });
  });
  after(async () => service.stop());
  beforeEach(() => {
    clock.current = new Date(NOW);
  });

  describe('validation on create (400 naming the field)', () => {
    const withoutField = (field: string) => {
      const body: Record<string, unknown> = valid();
      delete body[field];
      return body;
    };
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['schedule missing', withoutField('schedule'), /schedule/],
      ['schedule unknown', valid({ schedule: 'HOURLY' }), /schedule/],
      ['scan_types missing', withoutField('scan_types'), /scan_types/],
      ['scan_types empty', valid({ scan_types: [] }), /scan_types/],
      ['scan_types unknown', valid({ scan_types: ['FOO'] }), /scan_types/],
      ['filter_set missing', withoutField('filter_set'), /filter_set/],
      ['filter_set empty object', valid({ filter_set: {} }), /filter_set/],
      ['filter_set empty arrays', valid({ filter_set: { target_ids: [], tags: [] } }), /filter_set/],
      ['email_notification missing', withoutField('email_notification'), /email_notification/],
      ['email_notification unknown', valid({ email_notification: 'SOMETIMES' }), /email_notification/],
      ['start_time not a date-time', valid({ start_time: 'tomorrow' }), /start_time/],
      ['CUSTOM without schedule_dates', valid({ schedule: 'CUSTOM' }), /schedule_dates/],
      [
        'CUSTOM with 101 dates',
        valid({ schedule: 'CUSTOM', schedule_dates: Array.from({ length: 101 }, (_, i) => new Date(Date.parse(NOW) + (i + 1) * 86_400_000).toISOString()) }),
        /schedule_dates/,
      ],
      ['QUARTERLY with 3 dates', valid({ schedule: 'QUARTERLY', schedule_dates: QUARTERLY_DATES.slice(0, 3) }), /schedule_dates/],
      [
        'QUARTERLY with two dates in Q1',
        valid({ schedule: 'QUARTERLY', schedule_dates: ['2026-01-15T08:00:00Z', ...QUARTERLY_DATES.slice(0, 3)] }),
        /schedule_dates/,
      ],
      ['email_to with 6 addresses', valid({ email_to: Array.from({ length: 6 }, (_, i) => `a${i}@example.com`) }), /email_to/],
      ['email_to with an invalid address', valid({ email_to: ['not-an-email'] }), /email_to/],
      ['name empty', valid({ name: '' }), /name/],
      ['name of 101 characters', valid({ name: 'x'.repeat(101) }), /name/],
      ['time_zone unknown', valid({ time_zone: 'Mars/Olympus_Mons' }), /time_zone/],
    ];
    for (const [title, body, message] of cases) {
      it(`rejects ${title}`, async () => {
        expectError(await service.post('/v1/scans/scheduled', body), 400, message);
      });
    }

    it('applies the account rules of scans to scan_types', async () => {
      const free = service.createAccount('free-account', { plan: 'free' });
      expectError(
        await service.post('/v1/scans/scheduled', valid({ scan_types: ['NMAP', 'NESSUS'] }), { key: free.apiKey }),
        400,
        /scan_types: NESSUS scans need the Nessus/,
      );
      expectError(
        await service.post('/v1/scans/scheduled', valid({ scan_types: ['OWASP_ZAP_ACTIVE'] }), { key: free.apiKey }),
        400,
        /scan_types: OWASP_ZAP_ACTIVE scans need a paid plan/,
      );
      const paid = service.createAccount('paid-account', { plan: 'paid', features: ['nessus'] });
      const created = await create(valid({ scan_types: ['NESSUS', 'OWASP_ZAP_ACTIVE'] }), paid.apiKey);
      expect(created.scan_types).to.deep.equal(['NESSUS', 'OWASP_ZAP_ACTIVE']);
    });
  });

  describe('create: next_run for each schedule kind', () => {
    const cases: Array<[string, Record<string, unknown>, string | null]> = [
      ['ONCE at a future start_time', { schedule: 'ONCE', start_time: '2026-03-12T09:00:00.000Z' }, '2026-03-12T09:00:00.000Z'],
      ['DAILY from a past start_time', { schedule: 'DAILY', start_time: '2026-03-01T09:00:00.000Z' }, '2026-03-11T09:00:00.000Z'],
      ['WEEKLY from a past start_time', { schedule: 'WEEKLY', start_time: '2026-03-01T09:00:00.000Z' }, '2026-03-15T09:00:00.000Z'],
      ['MONTHLY clamped and not drifting', { schedule: 'MONTHLY', start_time: '2026-01-31T09:00:00.000Z' }, '2026-03-31T09:00:00.000Z'],
      ['QUARTERLY on its dates', { schedule: 'QUARTERLY', schedule_dates: QUARTERLY_DATES }, '2026-05-15T08:00:00.000Z'],
      ['CUSTOM on its dates', { schedule: 'CUSTOM', schedule_dates: ['2026-04-01T10:00:00.000Z', '2026-03-20T10:00:00.000Z'] }, '2026-03-20T10:00:00.000Z'],
      ['DAILY without start_time: runs immediately', { schedule: 'DAILY' }, NOW],
      ['ONCE without start_time: runs immediately', { schedule: 'ONCE' }, NOW],
      [
        'DAILY in Europe/Berlin keeps local time',
        { schedule: 'DAILY', start_time: '2026-03-01T08:00:00.000Z', time_zone: 'Europe/Berlin' },
        '2026-03-11T08:00:00.000Z',
      ],
      ['a disabled schedule', { schedule: 'DAILY', disabled: true }, null],
      ['CUSTOM with its dates used up', { schedule: 'CUSTOM', schedule_dates: ['2026-03-01T10:00:00.000Z'] }, null],
    ];
    for (const [title, overrides, nextRun] of cases) {
      it(title, async () => {
        const created = await create(valid(overrides));
        expect(created.next_run).to.equal(nextRun);
        expect(created.schedule).to.equal(overrides.schedule);
        expect(created.last_ran).to.equal(null);
        expect(created.created_at).to.equal(NOW);
      });
    }

    it('returns every field of a ScheduledScan', async () => {
      const created = await create(
        valid({
          name: 'Nightly',
          scan_types: ['NMAP', 'SSLYZE'],
          filter_set: { target_ids: ['t1'], tags: ['Prod'] },
          email_notification: 'ALWAYS',
          email_to: ['ops@example.com'],
        }),
      );
      expect(created).to.include({ name: 'Nightly', email_notification: 'ALWAYS', disabled: false, start_time: NOW, time_zone: null, schedule_dates: null });
      expect(created.scan_types).to.deep.equal(['NMAP', 'SSLYZE']);
      expect(created.targets_filter).to.deep.equal({ target_ids: ['t1'], tags: ['prod'] });
      expect(created.email_to).to.deep.equal(['ops@example.com']);
      expect(created.id).to.be.a('string');
    });
  });

  describe('list, get, delete', () => {
    it('lists newest first with pagination', async () => {
      const account = service.createAccount('lister');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await create(valid({ name: `s${i}` }), account.apiKey)).id);
      const first = await service.get('/v1/scans/scheduled', { key: account.apiKey, query: { page_size: 2 } });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[4], ids[3]]);
      const second = await service.get('/v1/scans/scheduled', { key: account.apiKey, query: { page_size: 2, page_token: first.body.next_page_token } });
      expect(second.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[2], ids[1]]);
      const third = await service.get('/v1/scans/scheduled', { key: account.apiKey, query: { page_size: 2, page_token: second.body.next_page_token } });
      expect(third.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[0]]);
      expect(third.body.next_page_token).to.equal(undefined);
    });

    it('routes GET /v1/scans/scheduled to the list, not to a scan with id "scheduled"', async () => {
      const response = await service.get('/v1/scans/scheduled');
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data).to.be.an('array');
    });

    it('gets one, and gives 404 for another account', async () => {
      // Due tomorrow, so the controller leaves it alone between the two reads.
      const created = await create(valid({ name: 'mine', start_time: '2026-03-11T12:00:00.000Z' }));
      const got = await service.get(`/v1/scans/scheduled/${created.id}`);
      expect(got.status).to.equal(200);
      expect(got.body.data).to.deep.equal(created);
      const other = service.createAccount('other');
      expectError(await service.get(`/v1/scans/scheduled/${created.id}`, { key: other.apiKey }), 404, /scheduled scan/);
      expectError(await service.put(`/v1/scans/scheduled/${created.id}`, valid(), { key: other.apiKey }), 404, /scheduled scan/);
      expectError(await service.delete(`/v1/scans/scheduled/${created.id}`, { key: other.apiKey }), 404, /scheduled scan/);
      expectError(await service.get('/v1/scans/scheduled/no-such-id'), 404, /scheduled scan/);
    });

    it('deletes', async () => {
      const created = await create(valid());
      const deleted = await service.delete(`/v1/scans/scheduled/${created.id}`);
      expect(deleted.status, deleted.text).to.equal(200);
      expect(deleted.body).to.deep.equal({ data: { id: created.id, deleted: true } });
      expectError(await service.get(`/v1/scans/scheduled/${created.id}`), 404, /scheduled scan/);
      expectError(await service.delete(`/v1/scans/scheduled/${created.id}`), 404, /scheduled scan/);
    });
  });

  describe('update (replace semantics)', () => {
    const full = () =>
      valid({
        name: 'Before',
        scan_types: ['NMAP', 'NUCLEI'],
        email_to: ['a@example.com'],
        start_time: '2026-03-01T09:00:00.000Z',
        disabled: false,
      });

    for (const field of ['schedule', 'filter_set', 'email_notification']) {
      it(`requires ${field}`, async () => {
        const created = await create(full());
        const body: Record<string, unknown> = valid();
        delete body[field];
        expectError(await service.put(`/v1/scans/scheduled/${created.id}`, body), 400, new RegExp(field));
      });
    }

    it('validates like create', async () => {
      const created = await create(full());
      expectError(await service.put(`/v1/scans/scheduled/${created.id}`, valid({ schedule: 'CUSTOM' })), 400, /schedule_dates/);
      expectError(await service.put(`/v1/scans/scheduled/${created.id}`, valid({ filter_set: { tags: [] } })), 400, /filter_set/);
      expectError(await service.put(`/v1/scans/scheduled/${created.id}`, valid({ email_to: ['nope'] })), 400, /email_to/);
      expectError(await service.put(`/v1/scans/scheduled/${created.id}`, valid({ scan_types: [] })), 400, /scan_types/);
    });

    it('keeps omitted scan_types, email_to, disabled and start_time, clears an omitted name', async () => {
      const created = await create({ ...full(), disabled: true });
      const response = await service.put(`/v1/scans/scheduled/${created.id}`, {
        schedule: 'WEEKLY',
        filter_set: { target_ids: ['t9'] },
        email_notification: 'ON_CHANGES',
      });
      expect(response.status, response.text).to.equal(200);
      const updated = response.body.data;
      expect(updated.name).to.equal(null);
      expect(updated.scan_types).to.deep.equal(['NMAP', 'NUCLEI']);
      expect(updated.email_to).to.deep.equal(['a@example.com']);
      expect(updated.disabled).to.equal(true);
      expect(updated.start_time).to.equal('2026-03-01T09:00:00.000Z');
      expect(updated.schedule).to.equal('WEEKLY');
      expect(updated.targets_filter).to.deep.equal({ target_ids: ['t9'], tags: [] });
      expect(updated.email_notification).to.equal('ON_CHANGES');
      expect(updated.next_run).to.equal(null);
      expect(updated.created_at).to.equal(created.created_at);
    });

    it('replaces sent fields', async () => {
      const created = await create(full());
      const response = await service.put(`/v1/scans/scheduled/${created.id}`, valid({ name: 'After', scan_types: ['SSLYZE'], email_to: [], disabled: false }));
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data).to.include({ name: 'After' });
      expect(response.body.data.scan_types).to.deep.equal(['SSLYZE']);
      expect(response.body.data.email_to).to.deep.equal([]);
    });

    it('uses a start_time no more than 5 minutes in the past as the next run', async () => {
      const created = await create(full());
      const start = minutesAgo(4);
      const response = await service.put(`/v1/scans/scheduled/${created.id}`, valid({ start_time: start }));
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data.next_run).to.equal(start);
      expect(response.body.data.start_time).to.equal(start);
    });

    it('recalculates the next run from a start_time more than 5 minutes in the past', async () => {
      const created = await create(full());
      const response = await service.put(`/v1/scans/scheduled/${created.id}`, valid({ start_time: minutesAgo(6) }));
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data.next_run).to.equal('2026-03-11T11:54:00.000Z');
    });

    it('recalculates next_run on every update, from the clock', async () => {
      const created = await create(valid({ schedule: 'ONCE' }));
      expect(created.next_run).to.equal(NOW);
      clock.current = new Date('2026-03-10T13:00:00.000Z');
      const kept = await service.put(`/v1/scans/scheduled/${created.id}`, valid({ schedule: 'DAILY' }));
      // start_time kept (not sent): recalculated from now, the next 12:00 after 13:00.
      expect(kept.body.data.next_run).to.equal('2026-03-11T12:00:00.000Z');
      clock.current = new Date('2026-03-12T12:30:00.000Z');
      const again = await service.put(`/v1/scans/scheduled/${created.id}`, valid({ schedule: 'DAILY' }));
      expect(again.body.data.next_run).to.equal('2026-03-13T12:00:00.000Z');
    });
  });

  it('deleting a target removes its id from the schedules that select it', async () => {
    const a = await service.post('/v1/targets', { target: 'a.schedule-test.example' });
    const b = await service.post('/v1/targets', { target: 'b.schedule-test.example' });
    expect(a.status, a.text).to.equal(200);
    expect(b.status, b.text).to.equal(200);
    const both = await create(valid({ filter_set: { target_ids: [a.body.data.id, b.body.data.id], tags: ['x'] } }));
    const onlyA = await create(valid({ filter_set: { target_ids: [a.body.data.id] } }));
    const onlyB = await create(valid({ filter_set: { target_ids: [b.body.data.id] } }));
    const deleted = await service.delete(`/v1/targets/${a.body.data.id}`);
    expect(deleted.status, deleted.text).to.equal(200);
    expect((await service.get(`/v1/scans/scheduled/${both.id}`)).body.data.targets_filter).to.deep.equal({ target_ids: [b.body.data.id], tags: ['x'] });
    expect((await service.get(`/v1/scans/scheduled/${onlyA.id}`)).body.data.targets_filter).to.deep.equal({ target_ids: [], tags: [] });
    expect((await service.get(`/v1/scans/scheduled/${onlyB.id}`)).body.data.targets_filter).to.deep.equal({ target_ids: [b.body.data.id], tags: [] });
  });
});
