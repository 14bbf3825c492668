/**
 * The ScheduledScan reconciler, as sample-controller's tests do it: fixture
 * objects in (a CR on the fake API server, a row in a real SQLite store), one
 * reconcile, the ordered actions out; then a failed write healed by the next
 * pass, and a refusal that a new process (no memory) keeps.
 */
import { expect } from 'chai';
import { loadSettings } from '../../src/config/settings.js';
import type { ScheduledScan } from '../../src/app/ports.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore } from '../../src/main/composition-root.js';
import { NO_EVENTS } from '../../src/runtime/kubernetes/event-recorder.js';
import { scheduledScanSpecOf, scheduledScanStatusOf } from '../../src/runtime/kubernetes/scheduled-scan-object.js';
import { ScheduledScanResourceFace, type ScheduledScanAction, type ScheduledScanObject } from '../../src/runtime/kubernetes/scheduled-scan-face.js';
import { SCHEDULED_SCAN_FINALIZER } from '../../src/runtime/kubernetes/reconciler-kit.js';
import type { ScheduledScanReconciler } from '../../src/app/controller/scheduled-scan-reconciler.js';
import { scheduledScanReconciler } from '../../src/main/composition-root.js';
import { FakeTimers } from '../support/fake-timers.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { tempDir } from '../support/temp-dir.js';

const NS = 'vigil-acme';
const API_VERSION = 'vigil.dev/v1alpha1';
const NOW = new Date('2026-11-25T00:00:00Z');
const KEY = `${NS}/nightly`;

interface Fixture {
  server: FakeKubeApiServer;
  core: ReturnType<typeof composeCore>;
  account: Account;
  reconciler: ScheduledScanReconciler;
  actions: ScheduledScanAction[];
}

interface Case {
  name: string;
  /** The row, made through the service before the CR is set. */
  row?: (fixture: Fixture) => ScheduledScan;
  /** The CR as the cache holds it. */
  object?: (row: ScheduledScan | undefined) => Partial<KubeObject>;
  /** Before the reconcile (a row written through the API). */
  before?: (fixture: Fixture) => void;
  expected: (row: ScheduledScan | undefined) => ScheduledScanAction[];
  /** What holds afterwards. */
  then?: (fixture: Fixture, row: ScheduledScan | undefined) => void;
}

const crRef = (name: string, namespace = NS) => ({ apiVersion: API_VERSION, kind: 'ScheduledScan', namespace, name });
const daily = (overrides: Record<string, unknown> = {}) => ({
  schedule: 'DAILY',
  scanTypes: ['NMAP'],
  filterSet: { tags: ['prod'] },
  emailNotification: 'NEVER',
  startTime: '2099-01-01T06:00:00Z',
  ...overrides,
});
const applied = (spec: unknown, namespace = NS) => ({ metadata: { name: 'nightly', namespace }, spec });
const makeRow = ({ core, account }: Fixture) =>
  core.scheduledScans.create(
    account,
    { schedule: 'DAILY', scan_types: ['NMAP'], filter_set: { tags: ['prod'] }, email_notification: 'NEVER', start_time: '2099-01-01T06:00:00Z' },
    'nightly',
  );
/** A CR that shows its row as this reconciler writes it, at `generation`, with the spec given (the row's by default). */
const inStep = (row: ScheduledScan, generation: number, spec: unknown = scheduledScanSpecOf(row), observedGeneration = generation): Partial<KubeObject> => ({
  metadata: { name: 'nightly', namespace: NS, generation, labels: { 'vigil.dev/scheduled-scan-id': row.id }, finalizers: [SCHEDULED_SCAN_FINALIZER] },
  spec: spec as Record<string, unknown>,
  status: JSON.parse(
    JSON.stringify(scheduledScanStatusOf(row, { refusal: undefined, observedGeneration, previous: [], now: NOW }), (_key, value) =>
      value === null ? undefined : value,
    ),
  ),
});
const crOf = (fixture: Fixture) => fixture.server.getObject(crRef('nightly')) as (KubeObject & ScheduledScanObject) | undefined;
const accepted = (fixture: Fixture) => crOf(fixture)?.status?.conditions?.find((condition) => condition.type === 'Accepted');

const cases: Case[] = [
  {
    name: 'a ScheduledScan applied in a bound namespace creates its schedule, gets the finalizer and shows the row',
    object: () => applied(daily()),
    expected: () => [{ action: 'createRow', scheduledScanId: '*' }, { action: 'addFinalizer' }, { action: 'patchStatus' }],
    then: (fixture) => {
      const row = fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')!;
      const cr = crOf(fixture)!;
      expect(cr.metadata.finalizers).to.deep.equal([SCHEDULED_SCAN_FINALIZER]);
      expect(cr.status).to.include({ scheduledScanId: row.id, nextRun: row.nextRun, observedGeneration: 1 });
      expect(cr.spec, 'the applied spec is kept as written').to.deep.equal(daily());
    },
  },
  {
    name: 'one in a namespace no account is bound to is left alone: nothing is scheduled and nothing written',
    object: () => applied(daily(), 'elsewhere'),
    expected: () => [],
    then: (fixture) => expect(fixture.core.scheduledScanRepository.list(fixture.account.id, 10, undefined).items).to.deep.equal([]),
  },
  {
    name: 'one whose spec breaks a rule is refused as InvalidSpec',
    object: () => applied(daily({ schedule: 'CUSTOM' })),
    expected: () => [{ action: 'refuse', reason: 'InvalidSpec' }],
    then: (fixture) => expect(accepted(fixture)!.message).to.match(/scheduleDates/),
  },
  {
    name: 'an edit refused keeps every other condition of the status and observes the generation it refused (one merged list)',
    row: makeRow,
    object: (row) => inStep(row!, 2, daily({ schedule: 'CUSTOM' }), 1),
    expected: () => [{ action: 'refuse', reason: 'InvalidSpec' }, { action: 'patchStatus' }],
    then: (fixture) => {
      // The refusal's own write (the status write after it aside) carries the whole list.
      const refusal = fixture.server.requests.find((request) => request.method === 'PATCH' && request.path.endsWith('/status'))!;
      const conditions = (refusal.body as { status: { conditions: Array<{ type: string; status: string; observedGeneration?: number }> } }).status.conditions;
      expect(conditions.map((condition) => `${condition.type}=${condition.status}`)).to.deep.equal(['Accepted=False', 'Scheduled=True']);
      expect(conditions[0]).to.include({ observedGeneration: 2 });
    },
  },
  {
    name: 'one the account may not run is refused as Rejected',
    object: () => applied(daily({ scanTypes: ['NESSUS'] })),
    expected: () => [{ action: 'refuse', reason: 'Rejected' }],
  },
  {
    name: 'a row created through the API without its CR gets one (spec, id label, finalizer) and its status',
    row: makeRow,
    expected: (row) => [{ action: 'createObject', scheduledScanId: row!.id }, { action: 'patchStatus' }],
    then: (fixture, row) => {
      const cr = crOf(fixture)!;
      expect(cr.metadata.finalizers).to.deep.equal([SCHEDULED_SCAN_FINALIZER]);
      expect(cr.metadata.labels).to.include({ 'vigil.dev/scheduled-scan-id': row!.id });
      expect(cr.spec).to.deep.equal(scheduledScanSpecOf(row!));
      expect(cr.status).to.include({ scheduledScanId: row!.id, observedGeneration: 1 });
    },
  },
  {
    name: 'a CR that already shows its row is left alone: no action',
    row: makeRow,
    object: (row) => inStep(row!, 1),
    expected: () => [],
  },
  {
    name: 'a CR without the finalizer (made before finalizers) gets it, and nothing else',
    row: makeRow,
    object: (row) => {
      const object = inStep(row!, 1);
      return { ...object, metadata: { ...object.metadata!, finalizers: [] } };
    },
    expected: () => [{ action: 'addFinalizer' }],
  },
  {
    name: 'a labelled CR whose schedule was deleted through the API is released and deleted, orphaning the Scans of its runs',
    row: (fixture) => {
      const row = makeRow(fixture);
      fixture.core.scheduledScans.delete(fixture.account, row.id);
      return row;
    },
    object: (row) => ({
      metadata: { name: 'nightly', namespace: NS, labels: { 'vigil.dev/scheduled-scan-id': row!.id }, finalizers: [SCHEDULED_SCAN_FINALIZER] },
      spec: daily(),
    }),
    expected: () => [{ action: 'deleteObject' }, { action: 'releaseFinalizer' }],
    then: (fixture, row) => {
      expect(crOf(fixture)).to.equal(undefined);
      expect(fixture.server.deletions.map((deletion) => deletion.propagationPolicy)).to.deep.equal(['Orphan']);
      expect(fixture.core.scanResourceMarks.deletedThroughApi(row!.id), 'forgotten once the CR is gone').to.equal(false);
    },
  },
  {
    name: 'a labelled CR whose schedule has no record and was not deleted (an older database) gets RecordMissing and is not deleted',
    object: () => ({
      metadata: {
        name: 'nightly',
        namespace: NS,
        labels: { 'vigil.dev/scheduled-scan-id': 'c0ffee00-0000-4000-8000-000000000002' },
        finalizers: [SCHEDULED_SCAN_FINALIZER],
      },
      spec: daily(),
    }),
    expected: () => [{ action: 'recordMissing' }],
    then: (fixture) => {
      expect(crOf(fixture)!.status!.conditions!.map((condition) => `${condition.type}=${condition.status}`)).to.deep.equal(['RecordMissing=True']);
      expect(fixture.server.deletions).to.deep.equal([]);
      expect(fixture.core.scheduledScanRepository.list(fixture.account.id, 10, undefined).items, 'no schedule made again').to.deep.equal([]);
    },
  },
  {
    name: 'a CR being deleted (kubectl delete, also while Vigil was down) deletes its schedule and releases the finalizer',
    row: makeRow,
    object: (row) => {
      const object = inStep(row!, 1);
      return { ...object, metadata: { ...object.metadata!, deletionTimestamp: '2026-11-25T00:00:00Z' } };
    },
    expected: (row) => [{ action: 'deleteRow', scheduledScanId: row!.id }, { action: 'releaseFinalizer' }],
    then: (fixture) => {
      expect(fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')).to.equal(undefined);
      expect(crOf(fixture)).to.equal(undefined);
    },
  },
  {
    name: 'a CR being deleted in a namespace no account is bound to is released at once',
    object: () => ({
      metadata: { name: 'nightly', namespace: 'elsewhere', finalizers: [SCHEDULED_SCAN_FINALIZER], deletionTimestamp: '2026-11-25T00:00:00Z' },
      spec: daily(),
    }),
    expected: () => [{ action: 'releaseFinalizer' }],
  },
  {
    name: 'a new generation of the spec (kubectl edit) updates the row, and the status observes it',
    row: makeRow,
    object: (row) => inStep(row!, 2, daily({ schedule: 'WEEKLY', disabled: true }), 1),
    expected: (row) => [{ action: 'updateRow', scheduledScanId: row!.id }, { action: 'patchStatus' }],
    then: (fixture, row) => {
      const updated = fixture.core.scheduledScanRepository.findByIdUnscoped(row!.id)!;
      expect(updated).to.include({ schedule: 'WEEKLY', disabled: true, nextRun: null });
      expect(crOf(fixture)!.status).to.include({ observedGeneration: 2 });
      expect(crOf(fixture)!.status).not.to.have.property('nextRun');
    },
  },
  {
    name: 'a new generation that is refused keeps the row as it was and says so for that generation',
    row: makeRow,
    object: (row) => inStep(row!, 2, daily({ scanTypes: ['NESSUS'] }), 1),
    expected: () => [{ action: 'refuse', reason: 'Rejected' }, { action: 'patchStatus' }],
    then: (fixture, row) => {
      expect(fixture.core.scheduledScanRepository.findByIdUnscoped(row!.id)!.scanTypes).to.deep.equal(['NMAP']);
      expect(accepted(fixture)).to.include({ status: 'False', reason: 'Rejected', observedGeneration: 2 });
      expect(accepted(fixture)!.message).to.match(/keeps its previous configuration/);
    },
  },
  {
    name: 'a row changed through the API replaces the CR spec, and the status observes the generation that made',
    row: makeRow,
    object: (row) => inStep(row!, 1),
    before: (fixture) => {
      const row = fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')!;
      fixture.core.scheduledScans.update(fixture.account, row.id, {
        schedule: 'WEEKLY',
        filter_set: { tags: ['prod'] },
        email_notification: 'NEVER',
        start_time: '2099-01-01T06:00:00Z',
      });
    },
    expected: () => [{ action: 'replaceSpec' }, { action: 'patchStatus' }],
    then: (fixture) => {
      const cr = crOf(fixture)!;
      expect(cr.spec).to.include({ schedule: 'WEEKLY' });
      expect(cr.metadata.generation).to.equal(2);
      expect(cr.status).to.include({ observedGeneration: 2 });
    },
  },
  {
    name: 'a row changed through the API while Vigil was down (no hint in memory) still gets its spec shown',
    row: makeRow,
    object: (row) => inStep(row!, 1),
    before: (fixture) => {
      const row = fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')!;
      fixture.core.scheduledScans.update(fixture.account, row.id, {
        schedule: 'WEEKLY',
        filter_set: { tags: ['prod'] },
        email_notification: 'NEVER',
        start_time: '2099-01-01T06:00:00Z',
      });
    },
    expected: () => [{ action: 'replaceSpec' }, { action: 'patchStatus' }],
    then: (fixture) => expect(crOf(fixture)!.spec).to.include({ schedule: 'WEEKLY' }),
  },
  {
    name: 'a refused spec is kept until the row changes through the API, which replaces it and clears the refusal',
    row: makeRow,
    object: (row) => {
      const object = inStep(row!, 2, daily({ scanTypes: ['NESSUS'] }), 2);
      const conditions = (object.status as { conditions: Array<Record<string, unknown>> }).conditions.map((condition) =>
        condition.type === 'Accepted'
          ? { ...condition, status: 'False', reason: 'Rejected', message: 'NESSUS is not in the plan; the schedule keeps its previous configuration' }
          : condition,
      );
      return { ...object, status: { ...(object.status as object), conditions } };
    },
    before: (fixture) => {
      const row = fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')!;
      fixture.core.scheduledScans.update(fixture.account, row.id, {
        schedule: 'WEEKLY',
        filter_set: { tags: ['prod'] },
        email_notification: 'NEVER',
        start_time: '2099-01-01T06:00:00Z',
      });
    },
    expected: () => [{ action: 'replaceSpec' }, { action: 'patchStatus' }],
    then: (fixture) => {
      expect(crOf(fixture)!.spec).to.deep.include({ schedule: 'WEEKLY', scanTypes: ['NMAP'] });
      expect(accepted(fixture)).to.include({ status: 'True', observedGeneration: 3 });
    },
  },
  {
    name: 'a run recorded on the row (no new configuration) writes only the status',
    row: makeRow,
    object: (row) => inStep(row!, 1),
    before: (fixture) => {
      const row = fixture.core.scheduledScanRepository.findByObjectName(fixture.account.id, 'nightly')!;
      fixture.core.scheduledScanRepository.recordRun(row.id, row.nextRun!, '2099-01-01T06:00:00.000Z', '2099-01-02T06:00:00.000Z');
    },
    expected: () => [{ action: 'patchStatus' }],
    then: (fixture) => expect(crOf(fixture)!.status).to.include({ lastRan: '2099-01-01T06:00:00.000Z', nextRun: '2099-01-02T06:00:00.000Z' }),
  },
];

function makeReconciler(
  server: FakeKubeApiServer,
  core: ReturnType<typeof composeCore>,
  actions: ScheduledScanAction[],
  // The fake server's store stands in for the informer's cache: the table states what the cache holds.
  cached = (namespace: string, name: string) => server.getObject(crRef(name, namespace)) as ScheduledScanObject | undefined,
): ScheduledScanReconciler {
  const face = new ScheduledScanResourceFace({
    kubeConfig: kubeConfig(server),
    namespaceOf: (accountId) => core.accountRepository.findById(accountId)?.namespace,
    service: core.scheduledScans,
    repository: core.scheduledScanRepository,
    marks: core.scanResourceMarks,
    cached,
    events: NO_EVENTS,
    clock: { now: () => NOW },
    onAction: (_key, action) => actions.push(action),
  });
  // As the service wires it: registered with the schedules' service, whose writes tell the face what changed.
  return scheduledScanReconciler(core, { now: () => NOW }, new FakeTimers(NOW.getTime()), {
    face,
    onError: (_key, error) => {
      throw error;
    },
  });
}

describe('the ScheduledScan reconciler (fixture objects in, actions out)', () => {
  let fixture: Fixture;
  let dir: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    dir = tempDir();
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    const account = core.accounts.createAccount({ name: 'acme', namespace: NS }).account;
    const actions: ScheduledScanAction[] = [];
    fixture = { server, core, account, reconciler: makeReconciler(server, core, actions), actions };
  });
  afterEach(async () => {
    await fixture.server.stop();
    fixture.core.db.close();
    dir.remove();
  });

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const row = testCase.row?.(fixture);
      const object = testCase.object?.(row);
      if (object !== undefined) fixture.server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', ...object } as KubeObject);
      testCase.before?.(fixture);
      fixture.server.clearRequests();
      const namespace = object?.metadata?.namespace ?? NS;
      await fixture.reconciler.reconcile(`${namespace}/nightly`);
      const wildcard = testCase.expected(row).some((expected) => 'scheduledScanId' in expected && expected.scheduledScanId === '*');
      const actions = fixture.actions.map((action) => ('scheduledScanId' in action && wildcard ? { ...action, scheduledScanId: '*' } : action));
      expect(actions).to.deep.equal(testCase.expected(row));
      testCase.then?.(fixture, row);
      // Level-triggered and idempotent: a second pass over what the first wrote does nothing.
      fixture.actions.length = 0;
      await fixture.reconciler.reconcile(`${namespace}/nightly`);
      expect(fixture.actions, 'a second pass').to.deep.equal([]);
    });
  }

  it('heals a failed spec write on the next pass: the CR is still owed the spec the row changed to', async () => {
    const row = makeRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', ...inStep(row, 1) } as KubeObject);
    fixture.core.scheduledScans.update(fixture.account, row.id, {
      schedule: 'WEEKLY',
      filter_set: { tags: ['prod'] },
      email_notification: 'NEVER',
      start_time: '2099-01-01T06:00:00Z',
    });
    fixture.server.failNext((request) => request.method === 'PATCH' && !request.path.endsWith('/status'), 500);
    let thrown: unknown;
    await fixture.reconciler.reconcile(KEY).catch((error: unknown) => (thrown = error));
    expect(thrown, 'the failure goes to the work queue, which retries with backoff').to.be.instanceOf(Error);
    expect(fixture.actions).to.deep.equal([{ action: 'replaceSpec' }]);
    fixture.actions.length = 0;
    await fixture.reconciler.reconcile(KEY);
    expect(fixture.actions).to.deep.equal([{ action: 'replaceSpec' }, { action: 'patchStatus' }]);
    expect(crOf(fixture)!.spec).to.include({ schedule: 'WEEKLY' });
  });

  it('a CR the cache does not show yet but that exists is compared as read, not created twice', async () => {
    const row = makeRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', ...inStep(row, 1) } as KubeObject);
    fixture.core.scheduledScans.update(fixture.account, row.id, {
      schedule: 'WEEKLY',
      filter_set: { tags: ['prod'] },
      email_notification: 'NEVER',
      start_time: '2099-01-01T06:00:00Z',
    });
    const actions: ScheduledScanAction[] = [];
    const behind = makeReconciler(fixture.server, fixture.core, actions, () => undefined);
    await behind.reconcile(KEY);
    expect(actions).to.deep.equal([{ action: 'createObject', scheduledScanId: row.id }, { action: 'replaceSpec' }, { action: 'patchStatus' }]);
    expect(crOf(fixture)!.spec).to.include({ schedule: 'WEEKLY' });
    expect(fixture.server.listObjects(API_VERSION, 'ScheduledScan', NS)).to.have.length(1);
  });

  it('a refusal lives in the CR status: a new process (no memory) keeps it and does not overwrite the refused spec', async () => {
    const row = makeRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', ...inStep(row, 2, daily({ scanTypes: ['NESSUS'] }), 1) } as KubeObject);
    await fixture.reconciler.reconcile(KEY);
    const restarted: ScheduledScanAction[] = [];
    await makeReconciler(fixture.server, fixture.core, restarted).reconcile(KEY);
    expect(restarted).to.deep.equal([]);
    expect(crOf(fixture)!.spec).to.deep.include({ scanTypes: ['NESSUS'] });
    expect(accepted(fixture)).to.include({ status: 'False', reason: 'Rejected' });
  });
});
