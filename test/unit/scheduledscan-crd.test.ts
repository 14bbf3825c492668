/**
 * crds/scheduledscan.yaml and src/domain/schedules/scheduled-scan-resource.ts
 * describe the same object: the API server validates with the first, the
 * embedded runtime with the second. These tests walk both and fail when they
 * drift, and check the ScheduledScan samples against both.
 */
import { expect } from 'chai';
import { z } from 'zod';
import { crdValidator, loadCrd, refusalMessages, samplesOfKind, structuralProblems, zodDriftProblems, type Schema } from '../support/crd-schema.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { SCAN_TYPES } from '../../src/domain/risks/finding.js';
import { nextRunAfter, SCHEDULE_KINDS } from '../../src/domain/schedules/schedule.js';
import {
  EMAIL_NOTIFICATIONS,
  parseScheduledScanResource,
  parseScheduledScanSpec,
  scheduleOf,
  SCHEDULED_SCAN_GROUP,
  SCHEDULED_SCAN_KIND,
  SCHEDULED_SCAN_PLURAL,
  SCHEDULED_SCAN_SPEC_MESSAGES as M,
  SCHEDULED_SCAN_VERSION,
  ScheduledScanResourceSchema,
  ScheduledScanSpecSchema,
} from '../../src/domain/schedules/scheduled-scan-resource.js';

const { crd, version, crdSchema } = loadCrd('scheduledscan.yaml');
const specSchema = crdSchema.properties.spec as Schema;
const zodSchema = z.toJSONSchema(ScheduledScanResourceSchema, { io: 'output', unrepresentable: 'any' }) as Schema;
const samples = samplesOfKind(SCHEDULED_SCAN_KIND);

const valid = {
  schedule: 'DAILY',
  scanTypes: ['NMAP'],
  filterSet: { tags: ['production'] },
  emailNotification: 'NEVER',
} as const;

const quarterDates = ['2026-02-15T06:00:00Z', '2026-05-15T06:00:00Z', '2026-08-15T06:00:00Z', '2026-11-15T06:00:00Z'];

const zodMessages = (input: unknown): string[] => refusalMessages(ScheduledScanSpecSchema, input);

describe('ScheduledScan custom resource definition (crds/scheduledscan.yaml)', () => {
  it('names the resource as the controller addresses it', () => {
    expect(crd.metadata.name).to.equal(`${SCHEDULED_SCAN_PLURAL}.${SCHEDULED_SCAN_GROUP}`);
    expect(crd.spec.group).to.equal(SCHEDULED_SCAN_GROUP);
    expect(crd.spec.scope).to.equal('Namespaced');
    expect(crd.spec.names).to.include({ kind: SCHEDULED_SCAN_KIND, plural: SCHEDULED_SCAN_PLURAL, singular: 'scheduledscan' });
    expect(crd.spec.names.shortNames).to.deep.equal(['vsched']);
    expect(crd.spec.versions).to.have.length(1);
    expect(version).to.include({ name: SCHEDULED_SCAN_VERSION, served: true, storage: true });
    expect(version.subresources).to.deep.equal({ status: {} });
  });

  it('is structural: every node has a type, objects say what they hold, arrays have items', () => {
    const problems = structuralProblems(crdSchema, ['default']);
    expect(problems).to.deep.equal([]);
    expect(crdSchema.properties.metadata).to.deep.equal({ type: 'object' });
  });

  it('bounds every list and string CEL rules read, so the API server can estimate their cost', () => {
    expect(specSchema.properties.scheduleDates.maxItems).to.equal(100);
    expect(specSchema.properties.filterSet.properties.targetIds.maxItems).to.equal(100);
    expect(specSchema.properties.filterSet.properties.tags.maxItems).to.equal(100);
    expect(specSchema.properties.timeZone.maxLength).to.equal(64);
  });

  it('agrees with the zod schema on field names, required fields, types, enums and bounds', () => {
    const problems = zodDriftProblems(crdSchema, zodSchema);
    expect(problems).to.deep.equal([]);
  });

  it('takes its enums from the domain: the 6 schedules, the 8 scan types and the 3 notification settings', () => {
    expect(specSchema.properties.schedule.enum).to.deep.equal([...SCHEDULE_KINDS]);
    expect(specSchema.properties.scanTypes.items.enum).to.deep.equal([...SCAN_TYPES]);
    expect(specSchema.properties.scanTypes.maxItems).to.equal(SCAN_TYPES.length);
    expect(specSchema.properties.scanTypes['x-kubernetes-list-type']).to.equal('set');
    expect(specSchema.properties.emailNotification.enum).to.deep.equal([...EMAIL_NOTIFICATIONS]);
  });

  it('status holds the next and last run, the last run’s Scans and standard conditions keyed by type', () => {
    const status = crdSchema.properties.status;
    expect(Object.keys(status.properties)).to.have.members(['scheduledScanId', 'nextRun', 'lastRan', 'lastRunScans', 'conditions', 'observedGeneration']);
    expect(status.properties.nextRun.format).to.equal('date-time');
    expect(status.properties.lastRan.format).to.equal('date-time');
    expect(status.properties.lastRunScans.maxItems).to.equal(100);
    const conditions = status.properties.conditions;
    expect(conditions['x-kubernetes-list-type']).to.equal('map');
    expect(conditions['x-kubernetes-list-map-keys']).to.deep.equal(['type']);
    expect(conditions.items.required).to.have.members(['type', 'status', 'reason', 'message', 'lastTransitionTime']);
  });

  it('carries one CEL rule per cross-field rule, with the messages the zod schema reports', () => {
    const specRules = specSchema['x-kubernetes-validations'] as Array<{ rule: string; message: string }>;
    expect(specRules.map((rule) => rule.message)).to.have.members([M.customDates, M.quarterlyDates]);
    const quarterly = specRules.find((rule) => rule.message === M.quarterlyDates)!.rule;
    expect(quarterly).to.contain('size(self.scheduleDates) == 4');
    expect(quarterly).to.contain('exists_one');
    expect(specRules.find((rule) => rule.message === M.customDates)!.rule).to.contain("self.schedule != 'CUSTOM'");
    const filterRules = specSchema.properties.filterSet['x-kubernetes-validations'] as Array<{ rule: string; message: string }>;
    expect(filterRules.map((rule) => rule.message)).to.deep.equal([M.filterSet]);
  });

  it('printer columns show schedule, next run, last ran, disabled and age from fields that exist', () => {
    const columns = version.additionalPrinterColumns as Array<{ name: string; type: string; jsonPath: string }>;
    expect(columns.map((column) => column.name)).to.deep.equal(['Schedule', 'Next Run', 'Last Ran', 'Disabled', 'Age']);
    for (const column of columns) {
      if (column.jsonPath === '.metadata.creationTimestamp') {
        expect(column.type).to.equal('date');
        continue;
      }
      const field = column.jsonPath
        .split('.')
        .slice(1)
        .reduce<Schema | undefined>((schema, key) => schema?.properties?.[key], crdSchema);
      expect(field, `${column.name} -> ${column.jsonPath}`).to.not.equal(undefined);
      if (field!.format !== 'date-time') expect(field!.type, column.name).to.equal(column.type);
    }
    // kubectl prints a future date column as <invalid>, so the next run is shown as text.
    expect(columns.find((column) => column.name === 'Next Run')!.type).to.equal('string');
  });
});

describe('ScheduledScan sample manifests (config/samples)', function () {
  const validate = crdValidator(crdSchema);

  it('holds a DAILY sample in a time zone and a QUARTERLY sample with four dates', function () {
    const daily = samples.find(({ manifest }) => manifest.spec.schedule === 'DAILY');
    const quarterly = samples.find(({ manifest }) => manifest.spec.schedule === 'QUARTERLY');
    expect(daily?.manifest.spec.timeZone).to.be.a('string');
    expect(quarterly?.manifest.spec.scheduleDates).to.have.length(4);
  });

  for (const { name, manifest } of samples) {
    it(`${name} is valid against the CRD schema and the zod schema, and has a next run`, () => {
      expect(validate(manifest), JSON.stringify(validate.errors)).to.equal(true);
      const resource = parseScheduledScanResource(manifest);
      expect(resource.metadata.namespace).to.equal('vigil-acme');
      expect(manifest.status).to.equal(undefined);
      expect(nextRunAfter(scheduleOf(resource.spec, new Date('2026-01-01T00:00:00Z')), new Date('2026-06-01T00:00:00Z'))).to.be.instanceOf(Date);
    });
  }

  it('the CRD schema itself refuses an unknown schedule, no scan types and a sixth e-mail address', () => {
    const manifest = { apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', metadata: { name: 'a', namespace: 'vigil-acme' }, spec: { ...valid } };
    expect(validate(manifest), JSON.stringify(validate.errors)).to.equal(true);
    expect(validate({ ...manifest, spec: { ...valid, schedule: 'HOURLY' } })).to.equal(false);
    expect(validate({ ...manifest, spec: { ...valid, scanTypes: [] } })).to.equal(false);
    expect(validate({ ...manifest, spec: { ...valid, emailTo: Array.from({ length: 6 }, (_, i) => `a${i}@acme.example`) } })).to.equal(false);
    expect(validate({ ...manifest, spec: { ...valid, emailTo: ['not an address'] } })).to.equal(false);
  });
});

describe('ScheduledScan spec zod schema: the CEL rules for the embedded runtime', () => {
  it('accepts every schedule with the dates it needs', () => {
    for (const schedule of ['ONCE', 'DAILY', 'WEEKLY', 'MONTHLY'])
      expect(ScheduledScanSpecSchema.safeParse({ ...valid, schedule }).success, schedule).to.equal(true);
    expect(ScheduledScanSpecSchema.safeParse({ ...valid, schedule: 'CUSTOM', scheduleDates: ['2026-03-01T12:00:00Z'] }).success).to.equal(true);
    expect(ScheduledScanSpecSchema.safeParse({ ...valid, schedule: 'QUARTERLY', scheduleDates: quarterDates }).success).to.equal(true);
    const full = {
      ...valid,
      filterSet: { targetIds: ['t-1'], tags: [] },
      emailTo: ['a@acme.example'],
      startTime: '2026-01-01T09:00:00Z',
      name: 'n',
      timeZone: 'Europe/Berlin',
      disabled: true,
    };
    expect(ScheduledScanSpecSchema.safeParse(full).success).to.equal(true);
  });

  const refusals: Array<{ name: string; spec: object; message: string | RegExp }> = [
    { name: 'CUSTOM without dates', spec: { ...valid, schedule: 'CUSTOM' }, message: M.customDates },
    { name: 'CUSTOM with an empty date list', spec: { ...valid, schedule: 'CUSTOM', scheduleDates: [] }, message: M.customDates },
    {
      name: 'CUSTOM with 101 dates',
      spec: { ...valid, schedule: 'CUSTOM', scheduleDates: Array.from({ length: 101 }, () => quarterDates[0]) },
      message: M.customDates,
    },
    { name: 'QUARTERLY with 3 dates', spec: { ...valid, schedule: 'QUARTERLY', scheduleDates: quarterDates.slice(1) }, message: M.quarterlyDates },
    {
      name: 'QUARTERLY with two dates in one quarter',
      spec: { ...valid, schedule: 'QUARTERLY', scheduleDates: [...quarterDates.slice(0, 3), '2026-09-01T00:00:00Z'] },
      message: M.quarterlyDates,
    },
    { name: 'a filter set with no target id and no tag', spec: { ...valid, filterSet: { targetIds: [], tags: [] } }, message: M.filterSet },
    { name: 'an empty filter set', spec: { ...valid, filterSet: {} }, message: M.filterSet },
    { name: 'a time zone that does not exist', spec: { ...valid, timeZone: 'Europe/Atlantis' }, message: M.timeZone },
    { name: 'a scan type listed twice', spec: { ...valid, scanTypes: ['NMAP', 'NMAP'] }, message: M.scanTypesOnce },
    { name: 'an unknown scan type', spec: { ...valid, scanTypes: ['NIKTO'] }, message: M.unknownScanType },
    { name: 'an unknown schedule', spec: { ...valid, schedule: 'HOURLY' }, message: M.unknownSchedule },
    { name: 'an unknown e-mail notification', spec: { ...valid, emailNotification: 'SOMETIMES' }, message: M.unknownEmailNotification },
    { name: 'six e-mail addresses', spec: { ...valid, emailTo: Array.from({ length: 6 }, (_, i) => `a${i}@acme.example`) }, message: /at most 5 addresses/ },
    { name: 'an e-mail address that is not one', spec: { ...valid, emailTo: ['security'] }, message: /must be an e-mail address/ },
    { name: 'a name of 101 characters', spec: { ...valid, name: 'n'.repeat(101) }, message: /at most 100 characters/ },
    { name: 'an empty name', spec: { ...valid, name: '' }, message: /must not be empty/ },
    { name: 'a start time without an offset', spec: { ...valid, startTime: '2026-01-01T09:00:00' }, message: /./ },
  ];
  for (const { name, spec, message } of refusals) {
    it(`refuses ${name}`, () => {
      const messages = zodMessages(spec);
      if (typeof message === 'string') expect(messages).to.include(message);
      else expect(messages.join(' ')).to.match(message);
    });
  }

  it('drops null fields before validating, as the API server prunes them', () => {
    expect(ScheduledScanSpecSchema.parse({ ...valid, name: null, scheduleDates: null })).to.deep.equal({
      ...valid,
      scanTypes: ['NMAP'],
      filterSet: { tags: ['production'] },
    });
  });

  it('parseScheduledScanSpec throws one InvalidRequestError naming the field', () => {
    expect(() => parseScheduledScanSpec({ ...valid, schedule: 'QUARTERLY' })).to.throw(InvalidRequestError, `spec.scheduleDates: ${M.quarterlyDates}`);
    expect(() => parseScheduledScanSpec({ ...valid, filterSet: {} })).to.throw(InvalidRequestError, `spec.filterSet: ${M.filterSet}`);
  });

  it('scheduleOf uses the creation time when no start time was given ("runs immediately")', () => {
    const spec = parseScheduledScanSpec({ ...valid, timeZone: 'Europe/Berlin' });
    expect(scheduleOf(spec, new Date('2026-01-01T08:00:00Z'))).to.deep.equal({
      kind: 'DAILY',
      startTime: '2026-01-01T08:00:00.000Z',
      timeZone: 'Europe/Berlin',
      disabled: false,
    });
    expect(scheduleOf(parseScheduledScanSpec({ ...valid, startTime: '2026-02-01T09:00:00Z', disabled: true }), new Date()).startTime).to.equal(
      '2026-02-01T09:00:00Z',
    );
  });

  it('the resource schema refuses duplicate condition types, as listType map does', () => {
    const condition = { type: 'Ready', status: 'True', reason: 'Scheduled', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const resource = {
      apiVersion: 'vigil.dev/v1alpha1',
      kind: 'ScheduledScan',
      metadata: { name: 'a', namespace: 'vigil-acme' },
      spec: valid,
      status: { nextRun: '2026-01-02T09:00:00Z', conditions: [condition] },
    };
    expect(() => parseScheduledScanResource(resource)).to.not.throw();
    expect(() => parseScheduledScanResource({ ...resource, status: { conditions: [condition, condition] } })).to.throw(InvalidRequestError, /once/);
    expect(() => parseScheduledScanResource({ ...resource, kind: 'Scan' })).to.throw(InvalidRequestError, /kind/);
  });
});
