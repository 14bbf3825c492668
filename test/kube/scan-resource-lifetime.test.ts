/**
 * A Scan resource's life beside its record (issue 27): a record missing
 * (the database restored from an older backup) never destroys a resource or
 * its Job, through the reconciler and through the whole service. Table tests: fixture objects on the fake API server, a record in
 * a real SQLite store, one reconcile, the server's own recorded requests out.
 */
import { expect } from 'chai';
import type { Scan } from '../../src/domain/scans/scan.js';
import { SCAN_FINALIZER, SCAN_ID_LABEL } from '../../src/runtime/kubernetes/reconciler-kit.js';
import type { ScanFaceOptions } from '../../src/runtime/kubernetes/scan-face.js';
import { scanReconcilerOn, storeAndServer, type StoreAndServer } from '../support/gen/scan-reconciler.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { actionsOf } from '../support/gen/actions.js';
import { TENANT_NAMESPACE, beingDeleted, scanObject, scanRef, withScanId, withSpec, withVigilStatus } from '../support/gen/scan-object.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';
import { scanJobName } from '../../src/runtime/kubernetes/job-manifest.js';

const NOW = new Date('2026-11-25T00:00:00Z');

interface Fixture extends StoreAndServer {
  now: Date;
}

interface Case {
  name: string;
  /** The record, made through the service (none: a fresh or older database). */
  record?: (fixture: Fixture) => Scan | undefined;
  /** The objects on the server (and so in the cache) before the reconcile. */
  objects: (record: Scan | undefined) => KubeObject[];
  /** The requests the reconcile sends, in order. */
  expected: string[];
  then?: (fixture: Fixture, record: Scan | undefined) => void;
}

const reconcilerOn = (fixture: Fixture, options: Partial<ScanFaceOptions> = {}) =>
  scanReconcilerOn(fixture.server, fixture.core, { clock: { now: () => fixture.now }, ...options });

const ENDED = { scanId: 'b9c3c1a4-5d2e-4f00-9a1e-000000000001', state: 'SUCCEEDED', progress: 100 };
const jobOf = (name: string): KubeObject =>
  ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${name}-scanner`, namespace: TENANT_NAMESPACE, labels: { [SCAN_ID_LABEL]: ENDED.scanId } },
    spec: {},
  }) as KubeObject;
const conditionsOf = (server: FakeKubeApiServer, name: string) =>
  (server.getObject(scanRef(name))?.status as { conditions?: Array<{ type: string; status: string; reason: string }> } | undefined)?.conditions ?? [];

const cases: Case[] = [
  {
    name: 'a resource showing Vigil status with no record (an older database) gets RecordMissing, and is neither deleted nor run again',
    objects: () => [scanObject('nightly', withScanId(ENDED.scanId), withVigilStatus(ENDED))],
    expected: ['PATCH scans/status'],
    then: ({ server, core, account }) => {
      expect(conditionsOf(server, 'nightly').map(({ type, status, reason }) => ({ type, status, reason }))).to.deep.equal([
        { type: 'RecordMissing', status: 'True', reason: 'NoRecord' },
      ]);
      expect(server.getObject(scanRef('nightly'))!.metadata.finalizers).to.deep.equal([SCAN_FINALIZER]);
      expect(core.scanRepository.findByName(account.id, 'nightly'), 'not run again').to.equal(undefined);
    },
  },
  {
    name: 'a running resource with no record keeps its Job',
    objects: () => [scanObject('nightly', withScanId(ENDED.scanId), withVigilStatus({ ...ENDED, state: 'RUNNING', progress: 40 })), jobOf('nightly')],
    expected: ['PATCH scans/status'],
    then: ({ server }) =>
      expect(server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: TENANT_NAMESPACE, name: 'nightly-scanner' })).to.not.equal(undefined),
  },
  {
    name: 'a resource without status is a new kubectl apply: adopted as a new scan, labelled with its id',
    objects: () => [scanObject('nightly')],
    expected: ['PATCH scans'],
    then: ({ server, core, account }) => {
      const adopted = core.scanRepository.findByName(account.id, 'nightly')!;
      expect(server.getObject(scanRef('nightly'))!.metadata.labels?.[SCAN_ID_LABEL]).to.equal(adopted.id);
    },
  },
  {
    name: 'a scan deleted through the API has its resource deleted, its finalizer released first, and the deletion forgotten',
    record: ({ core, account }) => {
      const started = core.scans.start(account, { type: 'NMAP', targets: ['scanme.example.com'] }, null, 'nightly')[0]!;
      core.scans.stop(account, started.id);
      // A scan that covered nothing: its deletion has nothing to recompute, and is done before it returns.
      void core.scans.delete(account, started.id);
      return started;
    },
    objects: (record) => [scanObject('nightly', withScanId(record!.id), withVigilStatus({ scanId: record!.id, state: 'STOPPED' }))],
    expected: ['PATCH scans', 'DELETE scans'],
    then: ({ server, core }, record) => {
      expect(server.getObject(scanRef('nightly'))).to.equal(undefined);
      expect(core.scanResourceMarks.deletedThroughApi(record!.id)).to.equal(false);
    },
  },
];

describe('Scan resources beside their records', () => {
  let fixture: Fixture;

  beforeEach(async () => (fixture = { ...(await storeAndServer()), now: NOW }));
  afterEach(() => fixture.stop());

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const record = testCase.record?.(fixture);
      for (const object of testCase.objects(record)) fixture.server.setObject(object);
      fixture.server.clearRequests();
      const reconciler = reconcilerOn(fixture);
      await reconciler.reconcile(`${TENANT_NAMESPACE}/nightly`);
      expect(actionsOf(fixture.server.requests)).to.deep.equal(testCase.expected);
      testCase.then?.(fixture, record);
      fixture.server.clearRequests();
      await reconciler.reconcile(`${TENANT_NAMESPACE}/nightly`);
      expect(actionsOf(fixture.server.requests), 'level-triggered: a second pass sends nothing new').to.deep.equal([]);
    });
  }
});

describe('restoring the database from an older backup (VIGIL_RUNTIME=kubernetes)', function () {
  this.timeout(30_000);
  const NS = 'vigil-test-account';

  it('leaves the Scan resources and Jobs of scans it has no record of in place, each with RecordMissing, and runs nothing again', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const env = { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };
    let before: TestService | undefined = await TestService.start({ env, kubeConfig: kubeConfig(server) });
    let after: TestService | undefined;
    try {
      const { id } = (await before.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data as { id: string };
      const scan = { id, name: `scan-${id}` };
      const cr = () => server.getObject(scanRef(scan.name, NS));
      await waitFor(
        async () => cr(),
        (found) => (found?.status as { state?: string } | undefined)?.state === 'RUNNING',
        'the CR showing RUNNING',
      );
      await before.stop();
      before = undefined;
      // A fresh data directory: the backup predates the scan.
      server.clearRequests();
      after = await TestService.start({ env, kubeConfig: kubeConfig(server) });
      const shown = await waitFor(
        async () => cr(),
        (found) => JSON.stringify(found?.status ?? {}).includes('RecordMissing'),
        'RecordMissing on the CR',
      );
      expect((shown!.status as { state: string }).state, 'the last status Vigil wrote stays').to.equal('RUNNING');
      expect(server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: NS, name: scanJobName(scan.name) }), 'its Job').to.not.equal(undefined);
      const writes = actionsOf(server.requests).filter((action) => !action.startsWith('GET') && action !== 'POST events');
      expect(writes, 'nothing deleted, nothing started').to.deep.equal(['PATCH scans/status']);
      expect((await after.get('/v1/scans')).body.data).to.deep.equal([]);
    } finally {
      await before?.stop();
      await after?.stop();
      await server.stop();
    }
  });
});

describe('a finished Scan resource expires, its record stays (injected clock)', () => {
  const FINISHED_AT = '2026-11-25T00:00:00.000Z';
  const at = (seconds: number) => new Date(Date.parse(FINISHED_AT) + seconds * 1000);
  let fixture: Fixture;

  beforeEach(async () => (fixture = { ...(await storeAndServer()), now: at(1) }));
  afterEach(() => fixture.stop());

  /** A scan (of a schedule, when given) that ended in `state` `secondsAfter` FINISHED_AT, with its CR showing it. */
  function finishedScan(
    name: string,
    state: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED',
    options: { scheduledBy?: string; secondsAfter?: number; spec?: Record<string, unknown> } = {},
  ): Scan {
    const { core, account, server } = fixture;
    const started = core.scans.start(account, { type: 'NMAP', targets: ['scanme.example.com'] }, options.scheduledBy ?? null, name)[0]!;
    const finishedAt = at(options.secondsAfter ?? 0).toISOString();
    expect(core.scanRepository.save({ ...started, state, startedAt: finishedAt, finishedAt }, [])).to.equal(true);
    const status = { scanId: started.id, state, progress: 0 };
    server.setObject(scanObject(name, withScanId(started.id), withSpec(options.spec ?? {}), withVigilStatus(status)));
    return core.scanRepository.findByName(account.id, name)!;
  }

  const reconcilerWith = (options: { ttl?: number; limits?: { successful: number; failed: number } } = {}) =>
    reconcilerOn(fixture, {
      ...(options.ttl === undefined ? {} : { ttlAfterFinishedSeconds: options.ttl }),
      ...(options.limits === undefined ? {} : { historyLimitsOf: () => options.limits! }),
    });
  const requests = () => actionsOf(fixture.server.requests.splice(0));

  it('requeues itself for finish + spec.ttlSecondsAfterFinished, then deletes the resource and keeps the record; a record without its face gets no new one', async () => {
    const scan = finishedScan('nightly', 'SUCCEEDED', { spec: { ttlSecondsAfterFinished: 60 } });
    const reconciler = reconcilerWith({ ttl: 3600 });
    requests();
    expect(await reconciler.reconcile(`${TENANT_NAMESPACE}/nightly`), 'a timed requeue, not a poll').to.deep.equal({ requeueAfterMs: 59_000 });
    expect(requests(), 'its final status shown until then').to.deep.equal(['PATCH scans/status']);
    fixture.now = at(60);
    await reconciler.reconcile(`${TENANT_NAMESPACE}/nightly`);
    expect(requests()).to.deep.equal(['PATCH scans', 'DELETE scans']);
    expect(fixture.server.getObject(scanRef('nightly'))).to.equal(undefined);
    expect(fixture.core.scans.get(fixture.account, scan.id).state, 'the record stays').to.equal('SUCCEEDED');
    await reconciler.reconcile(`${TENANT_NAMESPACE}/nightly`);
    expect(requests(), 'not created again').to.deep.equal([]);
  });

  it("without a TTL in its spec, the install's VIGIL_SCAN_TTL_AFTER_FINISHED applies", async () => {
    finishedScan('nightly');
    expect(await reconcilerWith({ ttl: 3600 }).reconcile(`${TENANT_NAMESPACE}/nightly`)).to.deep.equal({ requeueAfterMs: 3_599_000 });
  });

  it('expires at the first pass of a new process (the start-up resync) a resource whose time passed while Vigil was down', async () => {
    const scan = finishedScan('nightly');
    fixture.now = at(7 * 24 * 3600 + 1);
    requests();
    await reconcilerWith().reconcile(`${TENANT_NAMESPACE}/nightly`);
    expect(requests()).to.deep.equal(['PATCH scans', 'DELETE scans']);
    expect(fixture.core.scanRepository.findByIdUnscoped(scan.id), 'the record stays').to.not.equal(undefined);
  });

  it('keeps the record when the expired resource is still being deleted (its finalizer release failed): only the finalizer goes', async () => {
    const scan = finishedScan('nightly');
    fixture.core.scanResourceMarks.markExpired(scan.id, FINISHED_AT);
    fixture.server.setObject(scanObject('nightly', withScanId(scan.id), withVigilStatus({ scanId: scan.id, state: 'SUCCEEDED' }), beingDeleted()));
    requests();
    await reconcilerWith().reconcile(`${TENANT_NAMESPACE}/nightly`);
    expect(requests()).to.deep.equal(['PATCH scans']);
    expect(fixture.core.scanRepository.findByIdUnscoped(scan.id)).to.not.equal(undefined);
  });

  it("keeps the resources of a schedule's newest Scans within its history limits and expires the older ones, records kept", async () => {
    const schedule = 'c0ffee00-0000-4000-8000-000000000001';
    const older = [
      finishedScan('run-1', 'SUCCEEDED', { scheduledBy: schedule, secondsAfter: 0 }),
      finishedScan('run-2', 'FAILED', { scheduledBy: schedule, secondsAfter: 1 }),
    ];
    finishedScan('run-3', 'SUCCEEDED', { scheduledBy: schedule, secondsAfter: 2 });
    finishedScan('run-4', 'FAILED', { scheduledBy: schedule, secondsAfter: 3 });
    finishedScan('run-5', 'SUCCEEDED', { scheduledBy: schedule, secondsAfter: 4 });
    fixture.now = at(5);
    requests();
    await reconcilerWith({ limits: { successful: 2, failed: 1 } }).reconcile(`${TENANT_NAMESPACE}/run-5`);
    expect(requests(), 'run-5 shows its end; run-1 (third success) and run-2 (second failure) expire').to.deep.equal([
      'PATCH scans/status',
      'PATCH scans',
      'DELETE scans',
      'PATCH scans',
      'DELETE scans',
    ]);
    expect(['run-1', 'run-2', 'run-3', 'run-4', 'run-5'].map((name) => fixture.server.getObject(scanRef(name)) !== undefined)).to.deep.equal([
      false,
      false,
      true,
      true,
      true,
    ]);
    for (const scan of older) expect(fixture.core.scanRepository.findByIdUnscoped(scan.id), 'records kept').to.not.equal(undefined);
  });
});
