/**
 * A stored ScheduledScan and its custom resource in terms of each other
 * (src/runtime/kubernetes/scheduled-scan-object.ts): the spec and status the
 * mirror writes validate (the zod schema is held to the CRD by
 * scheduledscan-crd.test.ts), a row's own spec always matches it, and a spec
 * matches a row exactly when applying it would change nothing.
 */
import { expect } from 'chai';
import type { ScheduledScan } from '../../src/app/ports.js';
import { parseScheduledScanResource, type ScheduledScanSpec } from '../../src/domain/schedules/scheduled-scan-resource.js';
import {
  scheduledScanInputOf,
  scheduledScanSpecOf,
  scheduledScanStatusOf,
  specMatchesRow,
  type StatusContext,
} from '../../src/runtime/kubernetes/scheduled-scan-object.js';

const QUARTERS = ['2026-01-15T02:00:00.000Z', '2026-04-15T02:00:00.000Z', '2026-07-15T02:00:00.000Z', '2026-10-15T02:00:00.000Z'];

function row(overrides: Partial<ScheduledScan> = {}): ScheduledScan {
  return {
    id: '6f0c1d2e-0000-4000-8000-000000000001',
    accountId: 'acc',
    objectName: 'nightly',
    name: null,
    schedule: 'DAILY',
    scanTypes: ['NMAP'],
    filterTargetIds: [],
    filterTags: ['prod'],
    emailNotification: 'NEVER',
    emailTo: [],
    startTime: '2026-03-10T06:00:00.000Z',
    scheduleDates: null,
    timeZone: null,
    disabled: false,
    nextRun: '2026-03-11T06:00:00.000Z',
    lastRan: null,
    createdAt: '2026-03-10T05:00:00.000Z',
    ...overrides,
  };
}

const ROWS: Array<[string, ScheduledScan]> = [
  ['a DAILY schedule by tag', row()],
  [
    'a named one with recipients, ids and tags, in a time zone',
    row({ name: 'Nightly', emailTo: ['a@example.com'], filterTargetIds: ['t-1'], timeZone: 'Europe/Berlin', emailNotification: 'ALWAYS' }),
  ],
  ['a QUARTERLY schedule', row({ schedule: 'QUARTERLY', scheduleDates: QUARTERS, scanTypes: ['OPENVAS', 'SSLYZE'] })],
  [
    'a CUSTOM schedule that has run out',
    row({ schedule: 'CUSTOM', scheduleDates: ['2026-03-10T06:00:00.000Z'], nextRun: null, lastRan: '2026-03-10T06:00:00.000Z' }),
  ],
  ['a disabled ONCE schedule', row({ schedule: 'ONCE', disabled: true, nextRun: null })],
];

const context = (overrides: Partial<StatusContext> = {}): StatusContext => ({
  refusal: undefined,
  observedGeneration: 3,
  previous: [],
  now: new Date('2026-03-10T07:00:00.000Z'),
  ...overrides,
});

const conditionOf = (status: ReturnType<typeof scheduledScanStatusOf>, type: string) => status.conditions!.find((condition) => condition.type === type)!;

describe('ScheduledScan rows and their custom resources', () => {
  describe('the spec and status the mirror writes', () => {
    for (const [what, stored] of ROWS) {
      it(`validate as a ScheduledScan for ${what}, and the spec matches its row`, () => {
        const spec = scheduledScanSpecOf(stored);
        const status = scheduledScanStatusOf(stored, context());
        // The merge patch removes unset times with null; the object it leaves has none.
        const written = Object.fromEntries(Object.entries(status).filter(([, value]) => value !== null));
        const object = {
          apiVersion: 'vigil.dev/v1alpha1',
          kind: 'ScheduledScan',
          metadata: { name: stored.objectName, namespace: 'vigil-acme' },
          spec,
          status: written,
        };
        expect(() => parseScheduledScanResource(object)).not.to.throw();
        expect(specMatchesRow(spec, stored)).to.equal(true);
      });
    }

    it('leaves out what a manifest would leave out', () => {
      expect(scheduledScanSpecOf(row())).to.deep.equal({
        schedule: 'DAILY',
        scanTypes: ['NMAP'],
        filterSet: { tags: ['prod'] },
        emailNotification: 'NEVER',
        startTime: '2026-03-10T06:00:00.000Z',
        disabled: false,
      });
    });
  });

  describe('whether a spec says what the row holds', () => {
    const base = scheduledScanSpecOf(
      row({ name: 'Nightly', emailTo: ['a@example.com', 'b@example.com'], filterTags: ['edge', 'prod'], scanTypes: ['NMAP', 'SSLYZE'] }),
    );
    const stored = row({ name: 'Nightly', emailTo: ['a@example.com', 'b@example.com'], filterTags: ['edge', 'prod'], scanTypes: ['NMAP', 'SSLYZE'] });
    const cases: Array<[string, Partial<ScheduledScanSpec>, boolean]> = [
      [
        'lists in another order, tags in capitals, repeated',
        { scanTypes: ['SSLYZE', 'NMAP'], filterSet: { tags: ['PROD', 'edge', 'prod'] }, emailTo: ['b@example.com', 'a@example.com'] },
        true,
      ],
      ['no startTime: the schedule keeps its start', { startTime: undefined }, true],
      ['the same start written with an offset', { startTime: '2026-03-10T07:00:00+01:00' }, true],
      ['scheduleDates on a schedule that ignores them', { scheduleDates: QUARTERS }, true],
      ['another start', { startTime: '2026-03-10T07:00:00.000Z' }, false],
      ['no emailTo: the recipients are cleared', { emailTo: undefined }, false],
      ['no name: the name is cleared', { name: undefined }, false],
      ['disabled', { disabled: true }, false],
      ['another schedule', { schedule: 'WEEKLY' }, false],
      ['a target id more', { filterSet: { tags: ['edge', 'prod'], targetIds: ['t-1'] } }, false],
    ];
    for (const [what, change, same] of cases) {
      it(`${what}: ${same ? 'nothing to update' : 'an update'}`, () => {
        const spec = Object.fromEntries(Object.entries({ ...base, ...change }).filter(([, value]) => value !== undefined)) as ScheduledScanSpec;
        expect(specMatchesRow(spec, stored)).to.equal(same);
      });
    }
  });

  it('asks for the whole configuration a spec states: what it leaves out is cleared, except the start', () => {
    expect(scheduledScanInputOf({ schedule: 'DAILY', scanTypes: ['NMAP'], filterSet: { targetIds: ['t-1'] }, emailNotification: 'NEVER' })).to.deep.equal({
      schedule: 'DAILY',
      scan_types: ['NMAP'],
      filter_set: { target_ids: ['t-1'], tags: undefined },
      email_notification: 'NEVER',
      start_time: undefined,
      schedule_dates: undefined,
      email_to: [],
      name: undefined,
      time_zone: undefined,
      disabled: false,
    });
  });

  describe('the status', () => {
    it('removes nextRun and lastRan when they are unset, and says why nothing is scheduled', () => {
      const status = scheduledScanStatusOf(row({ disabled: true, nextRun: null }), context());
      expect(status).to.include({ scheduledScanId: row().id, nextRun: null, lastRan: null, observedGeneration: 3 });
      expect(conditionOf(status, 'Scheduled')).to.include({ status: 'False', reason: 'Disabled', observedGeneration: 3 });
      expect(conditionOf(scheduledScanStatusOf(row({ schedule: 'ONCE', nextRun: null }), context()), 'Scheduled')).to.include({ reason: 'NoRunLeft' });
      expect(conditionOf(scheduledScanStatusOf(row(), context()), 'Scheduled')).to.include({
        status: 'True',
        reason: 'NextRunSet',
        message: 'the next run is at 2026-03-11T06:00:00.000Z',
      });
    });

    it('shows a refusal as Accepted=False, and an accepted spec as Accepted=True', () => {
      const refused = scheduledScanStatusOf(row(), context({ refusal: { reason: 'Rejected', message: 'no' } }));
      expect(conditionOf(refused, 'Accepted')).to.include({ status: 'False', reason: 'Rejected', message: 'no' });
      expect(conditionOf(scheduledScanStatusOf(row(), context()), 'Accepted')).to.include({ status: 'True', reason: 'SpecAccepted' });
    });

    it('keeps a condition transition time while its status holds, so an unchanged status is written once', () => {
      const first = scheduledScanStatusOf(row(), context());
      const later = context({ previous: first.conditions!, now: new Date('2026-03-12T00:00:00.000Z') });
      const again = scheduledScanStatusOf(row({ nextRun: '2026-03-12T06:00:00.000Z' }), later);
      expect(conditionOf(again, 'Scheduled').lastTransitionTime).to.equal('2026-03-10T07:00:00.000Z');
      expect(JSON.stringify(scheduledScanStatusOf(row(), context({ previous: first.conditions! })))).to.equal(JSON.stringify(first));
      const disabled = scheduledScanStatusOf(row({ disabled: true, nextRun: null }), later);
      expect(conditionOf(disabled, 'Scheduled').lastTransitionTime).to.equal('2026-03-12T00:00:00.000Z');
    });
  });
});
