/**
 * The Scan reconciler, as sample-controller's tests do it: fixture objects in
 * (a CR on the fake API server, a row in a real SQLite store), one reconcile,
 * the ordered actions out; then the same cases under faults (a failed write,
 * a lost reply) and across a restart (a CR deleted while Vigil was down).
 */
import { expect } from 'chai';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import type { ScanAction } from '../../src/runtime/kubernetes/scan-face.js';
import { SCAN_FINALIZER } from '../../src/runtime/kubernetes/reconciler-kit.js';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import type { HostResolver } from '../../src/app/ports.js';
import { RUNNING_WORKLOADS, scanReconcilerOn } from '../support/gen/scan-reconciler.js';
import { ScanRequestBudget } from '../../src/runtime/kubernetes/request-budget.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-acme';
const API_VERSION = 'vigil.dev/v1alpha1';

interface Fixture {
  server: FakeKubeApiServer;
  core: ReturnType<typeof composeCore>;
  account: Account;
  reconciler: ScanReconciler;
  actions: ScanAction[];
}

interface Case {
  name: string;
  /** The row, made through the service before the CR is set. */
  row?: (fixture: Fixture) => Scan;
  /** The CR as the cache holds it. */
  object?: (row: Scan | undefined) => Partial<KubeObject>;
  expected: (row: Scan | undefined) => ScanAction[];
  /** What holds afterwards. */
  then?: (fixture: Fixture, row: Scan | undefined) => void;
}

const crRef = (name: string, namespace = NS) => ({ apiVersion: API_VERSION, kind: 'Scan', namespace, name });

/** A Scan reconciler on a fake API server and a store; the server's objects stand in for the informer's cache (the table states what the cache holds). */
const reconcilerOn = scanReconcilerOn;
const applied = (spec: unknown, extra: Partial<KubeObject['metadata']> = {}, namespace = NS) => ({ metadata: { name: 'nightly', namespace, ...extra }, spec });
const startRow = ({ core, account }: Fixture) => core.scans.start(account, { type: 'NMAP', targets: ['scanme.example.com'] }, null, 'nightly')[0]!;
/** A row whose scan runs (its Job started): the CR's status is written for it. */
const runningRow = (fixture: Fixture) => {
  const row = startRow(fixture);
  const at = new Date().toISOString();
  expect(fixture.core.scanRepository.save({ ...row, state: 'RUNNING', startedAt: at } as Scan, [])).to.equal(true);
  return fixture.core.scanRepository.findByName(row.accountId, 'nightly')!;
};
const labelled = (row: Scan | undefined, extra: Partial<KubeObject['metadata']> = {}) => ({
  name: 'nightly',
  namespace: NS,
  labels: { 'vigil.dev/scan-id': row!.id },
  finalizers: [SCAN_FINALIZER],
  ...extra,
});

const cases: Case[] = [
  {
    name: 'a Scan applied in a bound namespace starts its scan, gets label and finalizer, and shows the row',
    object: () => applied({ type: 'NMAP', targets: ['scanme.example.com'] }),
    expected: () => [{ action: 'startScan', scanId: '*' }, { action: 'patchMetadata' }],
    then: ({ server }) => {
      const cr = server.getObject(crRef('nightly'))!;
      expect(cr.metadata.finalizers).to.deep.equal([SCAN_FINALIZER]);
      expect(cr.status, 'no status while the scan is QUEUED: RUNNING is its first').to.equal(undefined);
    },
  },
  {
    name: 'a Scan in a namespace no account is bound to is left alone: nothing runs and nothing is written (another install may own it)',
    object: () => applied({ type: 'NMAP', targets: ['scanme.example.com'] }, {}, 'elsewhere'),
    expected: () => [],
    then: ({ server }) => expect(server.getObject(crRef('nightly', 'elsewhere'))!.status).to.equal(undefined),
  },
  {
    name: 'a Scan whose spec breaks a rule is refused as InvalidSpec',
    object: () => applied({ type: 'NMAP', targets: ['scanme.example.com'], tags: ['x'] }),
    expected: () => [{ action: 'refuse', reason: 'InvalidSpec' }],
  },
  {
    name: 'a row created through the API without its CR gets one, holding the finalizer',
    row: startRow,
    expected: (row) => [{ action: 'createObject', scanId: row!.id }],
    then: ({ server }) => expect(server.getObject(crRef('nightly'))!.metadata.finalizers).to.deep.equal([SCAN_FINALIZER]),
  },
  {
    name: 'a CR that already shows its row is left alone: no action',
    row: startRow,
    object: (row) => ({
      metadata: labelled(row, { generation: 1 }),
      spec: {},
      status: {
        scanId: row!.id,
        state: 'QUEUED',
        progress: 0,
        isAuthenticated: false,
        resolvedTargets: [],
        skippedTargets: [],
        counts: { newOpen: 0, stillOpen: 0, closed: 0 },
        conditions: [],
        observedGeneration: 1,
      },
    }),
    expected: () => [],
  },
  {
    name: 'a labelled CR whose row was deleted through the API is deleted, its finalizer released first',
    row: (fixture) => {
      const row = fixture.core.scans.stop(fixture.account, startRow(fixture).id);
      // A scan that covered nothing: its deletion has nothing to recompute, and is done before it returns.
      void fixture.core.scans.delete(fixture.account, row.id);
      return row;
    },
    object: (row) => ({ metadata: labelled(row), spec: {} }),
    expected: () => [{ action: 'deleteObject' }, { action: 'releaseFinalizer' }],
    then: ({ server }) => expect(server.getObject(crRef('nightly'))).to.equal(undefined),
  },
  {
    name: 'a CR being deleted whose scan is still queued stops it, and in the same pass, the scan ended, deletes the row and releases the finalizer',
    row: startRow,
    object: (row) => ({ metadata: labelled(row, { deletionTimestamp: '2026-11-25T00:00:00Z' }), spec: {} }),
    expected: (row) => [{ action: 'stop', scanId: row!.id }, { action: 'deleteRow', scanId: row!.id }, { action: 'releaseFinalizer' }],
    then: ({ core, account, server }) => {
      expect(core.scanRepository.findByName(account.id, 'nightly')).to.equal(undefined);
      expect(server.getObject(crRef('nightly'))).to.equal(undefined);
    },
  },
  {
    name: 'a CR being deleted whose scan ended deletes the row and releases the finalizer',
    row: (fixture) => {
      const row = startRow(fixture);
      return fixture.core.scans.stop(fixture.account, row.id);
    },
    object: (row) => ({ metadata: labelled(row, { deletionTimestamp: '2026-11-25T00:00:00Z' }), spec: {} }),
    expected: (row) => [{ action: 'deleteRow', scanId: row!.id }, { action: 'releaseFinalizer' }],
    then: ({ core, account, server }) => {
      expect(core.scanRepository.findByName(account.id, 'nightly')).to.equal(undefined);
      expect(server.getObject(crRef('nightly'))).to.equal(undefined);
    },
  },
  {
    name: 'a CR being deleted in a namespace no account is bound to is released at once',
    object: () => ({
      metadata: { name: 'nightly', namespace: 'elsewhere', finalizers: [SCAN_FINALIZER], deletionTimestamp: '2026-11-25T00:00:00Z' },
      spec: {},
    }),
    expected: () => [{ action: 'releaseFinalizer' }],
  },
];

describe('the Scan reconciler (fixture objects in, actions out)', () => {
  let fixture: Fixture;
  let dir: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    dir = tempDir();
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
    const account = core.accounts.createAccount({ name: 'acme', namespace: NS }).account;
    const actions: ScanAction[] = [];
    const reconciler = reconcilerOn(server, core, { onAction: (_key, action) => actions.push(action) });
    fixture = { server, core, account, reconciler, actions };
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
      if (object !== undefined) fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', ...object } as KubeObject);
      const namespace = object?.metadata?.namespace ?? NS;
      await fixture.reconciler.reconcile(`${namespace}/nightly`);
      const actions = fixture.actions.map((action) =>
        'scanId' in action && testCase.expected(row).some((expected) => 'scanId' in expected && expected.scanId === '*') ? { ...action, scanId: '*' } : action,
      );
      expect(actions).to.deep.equal(testCase.expected(row));
      testCase.then?.(fixture, row);
    });
  }

  it('a CR being deleted whose scan runs keeps the finalizer while its workload is not stopped yet (STOPPING), and releases it once the scan ended', async () => {
    const row = runningRow(fixture);
    fixture.server.setObject({
      apiVersion: API_VERSION,
      kind: 'Scan',
      metadata: labelled(row, { deletionTimestamp: '2026-11-25T00:00:00Z' }),
      spec: {},
    } as KubeObject);
    const failing = reconcilerOn(
      fixture.server,
      fixture.core,
      { onAction: (_key, action) => fixture.actions.push(action) },
      { runner: { ...RUNNING_WORKLOADS, stop: async () => Promise.reject(new Error('the Job could not be deleted')) } },
    );
    let thrown: unknown;
    await failing.reconcile(`${NS}/nightly`).catch((error: unknown) => (thrown = error));
    expect(thrown, 'the work queue retries it with backoff').to.be.instanceOf(Error);
    expect(fixture.actions).to.deep.equal([{ action: 'stop', scanId: row.id }]);
    expect(fixture.core.scans.get(fixture.account, row.id).state).to.equal('STOPPING');
    expect(fixture.server.getObject(crRef('nightly'))!.metadata.finalizers).to.deep.equal([SCAN_FINALIZER]);
    await fixture.reconciler.reconcile(`${NS}/nightly`);
    expect(fixture.actions.slice(1)).to.deep.equal([{ action: 'deleteRow', scanId: row.id }, { action: 'releaseFinalizer' }]);
    expect(fixture.server.getObject(crRef('nightly'))).to.equal(undefined);
  });

  it('writes no status for a QUEUED scan whose CR shows none (RUNNING is its first), and puts right a CR that shows another state', async () => {
    const row = startRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
    await fixture.reconciler.reconcile(`${NS}/nightly`);
    expect(fixture.actions).to.deep.equal([]);
    expect(fixture.server.getObject(crRef('nightly'))!.status).to.equal(undefined);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {}, status: { state: 'RUNNING' } } as KubeObject);
    await fixture.reconciler.reconcile(`${NS}/nightly`);
    expect(fixture.actions).to.deep.equal([{ action: 'patchStatus' }]);
    expect((fixture.server.getObject(crRef('nightly'))!.status as { state: string }).state).to.equal('QUEUED');
  });

  it('tells the story of a scan that ended before its CR showed RUNNING: a Running Event naming its Job, then how it ended', async () => {
    const recorded: Array<{ reason: string; message: string }> = [];
    const reconciler = reconcilerOn(fixture.server, fixture.core, {
      events: {
        normal: (_object, reason, message) => recorded.push({ reason, message }),
        warning: (_object, reason, message) => recorded.push({ reason, message }),
      },
    });
    const row = startRow(fixture);
    const at = '2026-11-25T00:00:01.000Z';
    const failed = { type: 'Failed', status: 'True', reason: 'JobFailed', message: 'the Job failed', lastTransitionTime: at };
    expect(fixture.core.scanRepository.save({ ...row, state: 'FAILED', startedAt: at, finishedAt: at, conditions: [failed] } as Scan, [])).to.equal(true);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
    await reconciler.reconcile(`${NS}/nightly`);
    expect(recorded).to.deep.equal([
      { reason: 'Running', message: 'created Job nightly-scanner: the NMAP scanner started' },
      { reason: 'JobFailed', message: 'the Job failed' },
    ]);
    await reconciler.reconcile(`${NS}/nightly`);
    expect(recorded, 'once per transition the CR shows').to.have.length(2);
  });

  describe('Events and progress within the budget', () => {
    const NOW = new Date('2026-11-25T00:00:00Z').getTime();
    let recorded: Array<{ reason: string; message: string }>;
    let budget: ScanRequestBudget;
    let now: number;

    /** With a free slot a scan starts in the pass that receives it; without, it waits QUEUED. */
    function reconcilerWith(slotFree: boolean, resolver?: HostResolver): ScanReconciler {
      return reconcilerOn(
        fixture.server,
        fixture.core,
        {
          events: {
            normal: (_object, reason, message) => recorded.push({ reason, message }),
            warning: (_object, reason, message) => recorded.push({ reason, message }),
          },
          clock: { now: () => new Date(now) },
          onAction: (_key, action) => fixture.actions.push(action),
          budget,
        },
        { maxConcurrentScans: slotFree ? 1 : 0, ...(resolver === undefined ? {} : { resolver }) },
      );
    }

    beforeEach(() => {
      recorded = [];
      budget = new ScanRequestBudget();
      now = NOW;
    });

    const toRunning = (row: Scan, progress = 0) => {
      const ready = {
        type: 'WorkloadReady',
        status: 'True',
        reason: 'WorkloadStarted',
        message: 'the NMAP scanner started on 1 target(s)',
        lastTransitionTime: '2026-11-25T00:00:00.000Z',
      };
      expect(
        fixture.core.scanRepository.save({ ...row, state: 'RUNNING', startedAt: '2026-11-25T00:00:00.000Z', progress, conditions: [ready] } as Scan, []),
      ).to.equal(true);
      return fixture.core.scanRepository.findByName(row.accountId, 'nightly')!;
    };

    it('folds Accepted into Running for an applied Scan that starts at once: one Event saying it was accepted and started, naming the Job', async () => {
      const reconciler = reconcilerWith(true);
      fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', ...applied({ type: 'NMAP', targets: ['scanme.example.com'] }) } as KubeObject);
      await reconciler.reconcile(`${NS}/nightly`);
      const row = fixture.core.scanRepository.findByName(fixture.account.id, 'nightly')!;
      expect(row.state, 'adopted and started in one pass').to.equal('RUNNING');
      expect(recorded).to.deep.equal([
        {
          reason: 'Running',
          message: `accepted and started (Vigil started NMAP scan ${row.id} for account acme); created Job nightly-scanner: the NMAP scanner started on 1 target(s)`,
        },
      ]);
      expect(budget.spent(row.id), 'the finalizer patch, the RUNNING write, one Event').to.equal(3);
    });

    it('keeps the Accepted Event of an applied Scan that has to wait for a slot, and the Running Event says only that it runs', async () => {
      const reconciler = reconcilerWith(false);
      fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', ...applied({ type: 'NMAP', targets: ['scanme.example.com'] }) } as KubeObject);
      await reconciler.reconcile(`${NS}/nightly`);
      const queued = fixture.core.scanRepository.findByName(fixture.account.id, 'nightly')!;
      expect(recorded).to.deep.equal([{ reason: 'Accepted', message: `Vigil started NMAP scan ${queued.id} for account acme` }]);
      toRunning(queued);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(recorded.map((event) => event.reason)).to.deep.equal(['Accepted', 'Running']);
      expect(recorded[1]!.message).to.equal('created Job nightly-scanner: the NMAP scanner started on 1 target(s)');
    });

    it('an applied Scan started at once that ends before it runs still tells its acceptance, then how it ended', async () => {
      // Its only target resolves to a private address: skipped, so the scan fails in the pass that starts it.
      const reconciler = reconcilerWith(true, { resolve4: async () => ['10.0.0.7'] });
      fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', ...applied({ type: 'NMAP', targets: ['scanme.example.com'] }) } as KubeObject);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(fixture.core.scanRepository.findByName(fixture.account.id, 'nightly')!.state).to.equal('FAILED');
      expect(recorded.map((event) => event.reason)).to.deep.equal(['Accepted', 'NoScannableTargets']);
    });

    /** A scan created through the API and running, its CR showing RUNNING at 0 (written by this reconciler at NOW), having spent `spent` requests. */
    async function runningAt(spent: number): Promise<{ reconciler: ScanReconciler; row: Scan }> {
      const reconciler = reconcilerWith(true);
      const row = toRunning(startRow(fixture));
      fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(fixture.server.getObject(crRef('nightly'))!.status as { state: string; progress: number }).to.deep.include({ state: 'RUNNING', progress: 0 });
      budget.spend(row.id, spent - budget.spent(row.id));
      budget.started(row.id);
      fixture.actions.length = 0;
      return { reconciler, row };
    }
    const progressOnCr = () => (fixture.server.getObject(crRef('nightly'))!.status as { progress: number }).progress;
    const withProgress = (row: Scan, progress: number) => {
      expect(fixture.core.scanRepository.save({ ...fixture.core.scanRepository.findByName(row.accountId, 'nightly')!, progress } as Scan, [])).to.equal(true);
    };

    it('writes progress alone once per 25-point step, not within 10 s of the last status write, while the budget has room for it and the 3 writes still to come', async () => {
      // A usual scan: CR, Secret, Job, RUNNING, Running Event, followed log = 6; 6 + 1 + 3 = 10.
      const { reconciler, row } = await runningAt(6);
      withProgress(row, 50);
      expect(await reconciler.reconcile(`${NS}/nightly`), 'within 10 s of the RUNNING write: looked at again when they are over').to.deep.equal({
        requeueAfterMs: 10_000,
      });
      expect(fixture.actions).to.deep.equal([]);
      now = NOW + 4_000;
      expect(await reconciler.reconcile(`${NS}/nightly`)).to.deep.equal({ requeueAfterMs: 6_000 });
      now = NOW + 10_000;
      await reconciler.reconcile(`${NS}/nightly`);
      expect(fixture.actions).to.deep.equal([{ action: 'patchStatus' }]);
      expect(progressOnCr()).to.equal(50);
      expect(budget.spent(row.id)).to.equal(7);
      // The budget is now full but for the end: no more progress alone, whatever the step or the time.
      withProgress(row, 90);
      now = NOW + 60_000;
      expect(await reconciler.reconcile(`${NS}/nightly`)).to.equal(undefined);
      expect(fixture.actions).to.have.length(1);
      expect(progressOnCr()).to.equal(50);
      // The end writes the exact figure and drops the count.
      const done = { type: 'Succeeded', status: 'True', reason: 'ResultsRecorded', message: 'done', lastTransitionTime: '2026-11-25T00:01:00.000Z' };
      expect(
        fixture.core.scanRepository.save(
          {
            ...fixture.core.scanRepository.findByName(row.accountId, 'nightly')!,
            state: 'SUCCEEDED',
            progress: 100,
            finishedAt: '2026-11-25T00:01:00.000Z',
            conditions: [done],
          } as Scan,
          [],
        ),
      ).to.equal(true);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(progressOnCr()).to.equal(100);
      expect(budget.size, 'the ended scan is no longer counted').to.equal(0);
    });

    it('writes no progress alone for a scan this process did not start (running across a restart): its count would be partial', async () => {
      const reconciler = reconcilerWith(true);
      const row = toRunning(startRow(fixture));
      fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
      await reconciler.reconcile(`${NS}/nightly`);
      fixture.actions.length = 0;
      withProgress(row, 60);
      now = NOW + 60_000;
      expect(await reconciler.reconcile(`${NS}/nightly`)).to.equal(undefined);
      expect(fixture.actions).to.deep.equal([]);
      budget.started(row.id);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(fixture.actions, 'the control: once started here, it is written').to.deep.equal([{ action: 'patchStatus' }]);
    });

    it('writes no progress alone within a step, and none when the budget has no room (a scan that already spent 7)', async () => {
      const { reconciler, row } = await runningAt(5);
      withProgress(row, 20);
      now = NOW + 30_000;
      expect(await reconciler.reconcile(`${NS}/nightly`), 'still the first step').to.equal(undefined);
      withProgress(row, 25);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(progressOnCr()).to.equal(25);
      withProgress(row, 49);
      now = NOW + 60_000;
      await reconciler.reconcile(`${NS}/nightly`);
      expect(progressOnCr(), 'the same step as the last write').to.equal(25);
      budget.spend(row.id);
      withProgress(row, 75);
      await reconciler.reconcile(`${NS}/nightly`);
      expect(progressOnCr(), '7 spent: 7 + 1 + 3 > 10').to.equal(25);
      expect(fixture.actions).to.deep.equal([{ action: 'patchStatus' }]);
    });
  });

  it('heals a failed status write on the next pass (level-triggered)', async () => {
    const row = runningRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
    fixture.server.failNext((request) => request.path.endsWith('/status'), 500);
    let thrown: unknown;
    await fixture.reconciler.reconcile(`${NS}/nightly`).catch((error: unknown) => (thrown = error));
    expect(thrown, 'the failure goes to the work queue, which retries with backoff').to.be.instanceOf(Error);
    await fixture.reconciler.reconcile(`${NS}/nightly`);
    expect((fixture.server.getObject(crRef('nightly'))!.status as { state: string }).state).to.equal('RUNNING');
  });

  it('converges when the reply to its write was lost: the write had landed, and the next pass sends nothing', async () => {
    const row = runningRow(fixture);
    fixture.server.setObject({ apiVersion: API_VERSION, kind: 'Scan', metadata: labelled(row), spec: {} } as KubeObject);
    fixture.server.loseNextReply((request) => request.path.endsWith('/status'));
    await fixture.reconciler.reconcile(`${NS}/nightly`).catch(() => undefined);
    expect((fixture.server.getObject(crRef('nightly'))!.status as { state: string }).state).to.equal('RUNNING');
    fixture.server.clearRequests();
    fixture.actions.length = 0;
    await fixture.reconciler.reconcile(`${NS}/nightly`);
    expect(fixture.actions).to.deep.equal([]);
    expect(fixture.server.requests).to.deep.equal([]);
  });
});

describe('Scan CRs with finalizers, through the service (VIGIL_RUNTIME=kubernetes)', function () {
  this.timeout(60_000);

  it('a Scan CR deleted while Vigil was down: at the next start its scan is stopped, its row deleted and the CR released', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const dir = tempDir();
    const options = { env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }, kubeConfig: kubeConfig(server), dataDir: dir.path };
    try {
      const first = await TestService.start(options);
      const firstKey = first.apiKey;
      const scan = (await first.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const ns = 'vigil-test-account';
      const ref = crRef(`scan-${scan.id}`, ns); // the CR of a Scan created through the API is named after its id
      await waitFor(
        async () => server.getObject(ref),
        (cr) => cr?.metadata.finalizers?.includes(SCAN_FINALIZER) === true,
        'the CR with its finalizer',
      );
      await waitFor(
        async () => (await first.get(`/v1/scans/${scan.id}`)).body.data.state,
        (state) => state === 'RUNNING',
        'RUNNING',
      );
      await first.stop();

      // kubectl delete while Vigil is down: the finalizer holds the CR, marked for deletion.
      const response = await fetch(`${server.url}/apis/vigil.dev/v1alpha1/namespaces/${ns}/scans/scan-${scan.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${server.token}` },
      });
      expect(response.status).to.equal(200);
      expect(server.getObject(ref)!.metadata.deletionTimestamp).to.be.a('string');

      const second = await TestService.start({ ...options, accountName: 'second' });
      try {
        await waitFor(
          async () => server.getObject(ref),
          (cr) => cr === undefined,
          'the CR released and gone',
        );
        expect((await second.get(`/v1/scans/${scan.id}`, { key: firstKey })).status, 'the row went with its CR').to.equal(404);
        expect(server.listObjects('batch/v1', 'Job', ns), 'the stop deleted the Job').to.deep.equal([]);
      } finally {
        await second.stop();
      }
    } finally {
      await server.stop();
      dir.remove();
    }
  });

  it('heals a CR status changed by hand, and finishes a scan whose Job completed while the watches were broken and the history compacted', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.1/32' }, kubeConfig: kubeConfig(server) });
    try {
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const ns = 'vigil-test-account';
      const ref = crRef(`scan-${scan.id}`, ns);
      const stateOnCr = () => (server.getObject(ref)?.status as { state?: string } | undefined)?.state;
      await waitFor(
        async () => stateOnCr(),
        (state) => state === 'RUNNING',
        'RUNNING on the CR',
      );

      const cr = server.getObject(ref)!;
      server.setObject({ ...cr, status: { ...(cr.status as object), state: 'FAILED' } });
      await waitFor(
        async () => stateOnCr(),
        (state) => state === 'RUNNING',
        'the hand-made status put right',
      );

      expect(server.breakWatches()).to.be.greaterThan(0);
      const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: `scan-${scan.id}-secret` }) as unknown as {
        stringData: { token: string };
      };
      await service.vigil.uploads.accept(scan.id, secret.stringData.token, 'nmap.xml', [
        Buffer.from('<?xml version="1.0"?><nmaprun scanner="nmap"></nmaprun>'),
      ]);
      const job = server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: ns, name: `scan-${scan.id}-scanner` })!;
      server.setObject({ ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
      server.compactHistory(); // the restarted watches get 410 and list again
      await waitFor(
        async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state,
        (state) => state === 'SUCCEEDED',
        'SUCCEEDED',
      );
      await waitFor(
        async () => stateOnCr(),
        (state) => state === 'SUCCEEDED',
        'SUCCEEDED on the CR',
      );
    } finally {
      await service.stop();
      await server.stop();
    }
  });

  it('a Scan deleted through the API removes its CR', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.1/32' }, kubeConfig: kubeConfig(server) });
    try {
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const ref = crRef(`scan-${scan.id}`, 'vigil-test-account');
      await waitFor(
        async () => server.getObject(ref),
        (cr) => cr !== undefined,
        'the CR',
      );
      await service.post(`/v1/scans/${scan.id}/stop`);
      await waitFor(
        async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state,
        (state) => state === 'STOPPED',
        'STOPPED',
      );
      expect((await service.delete(`/v1/scans/${scan.id}`)).status).to.equal(200);
      await waitFor(
        async () => server.getObject(ref),
        (cr) => cr === undefined,
        'the CR deleted',
      );
    } finally {
      await service.stop();
      await server.stop();
    }
  });
});
