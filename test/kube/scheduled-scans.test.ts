/**
 * ScheduledScans as custom resources (VIGIL_RUNTIME=kubernetes), against the
 * fake API server with real client-node informers: every row has its CR
 * (spec, status nextRun/lastRan, conditions), ScheduledScans applied, edited
 * and deleted with kubectl become rows, the Scans of a run are owned by
 * their ScheduledScan, and nothing Vigil writes comes back as a change.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseScheduledScanResource } from '../../src/domain/schedules/scheduled-scan-resource.js';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { tempDir } from '../support/temp-dir.js';
import { startKubeService, stopKubeService } from '../support/kube-service.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-test-account';
const API_VERSION = 'vigil.dev/v1alpha1';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

interface ScheduledScanCr extends KubeObject {
  spec: Record<string, unknown>;
  status?: { scheduledScanId?: string; nextRun?: string; lastRan?: string; observedGeneration?: number; conditions?: Condition[] };
}

const conditionOf = (cr: ScheduledScanCr | undefined, type: string) => cr?.status?.conditions?.find((condition) => condition.type === type);

/** Writes that reach ScheduledScan objects (lists and watches left out). */
const scheduledWrites = (server: FakeKubeApiServer): RecordedRequest[] =>
  server.requests.filter((request) => request.path.includes('/scheduledscans') && !request.watch && request.method !== 'GET');

/** Waits until no request has reached ScheduledScan objects for a while, and returns how many writes there were. */
async function quietWrites(server: FakeKubeApiServer, quietMs = 1_500): Promise<number> {
  let count = -1;
  await waitFor(
    async () => {
      const before = scheduledWrites(server).length;
      await new Promise((resolve) => setTimeout(resolve, quietMs));
      count = scheduledWrites(server).length;
      return count === before;
    },
    (quiet) => quiet,
    'the ScheduledScan writes to stop',
  );
  return count;
}

const sampleSpec = (file: string) =>
  (parse(readFileSync(new URL(`../../config/samples/${file}`, import.meta.url), 'utf8')) as { spec: Record<string, unknown> }).spec;

describe('ScheduledScan custom resources (VIGIL_RUNTIME=kubernetes)', function () {
  this.timeout(60_000);
  let server: FakeKubeApiServer;
  let service: TestService;

  beforeEach(async () => ({ server, service } = await startKubeService()));
  afterEach(() => stopKubeService({ server, service }));

  const read = (name: string, namespace = NS) =>
    server.getObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', namespace, name }) as ScheduledScanCr | undefined;
  /** As kubectl apply: a new spec on the main endpoint; the API server keeps uid and status and counts the generation. */
  const apply = (name: string, spec: Record<string, unknown>, namespace = NS) => {
    const current = read(name, namespace);
    const metadata = { name, namespace, ...(current?.metadata.labels === undefined ? {} : { labels: current.metadata.labels }) };
    return server.setObject({
      apiVersion: API_VERSION,
      kind: 'ScheduledScan',
      metadata,
      spec,
      ...(current?.status === undefined ? {} : { status: current.status }),
    }) as ScheduledScanCr;
  };
  /** A spec that runs tomorrow at the earliest, so no run writes to the status during a test. */
  const daily = (overrides: Record<string, unknown> = {}) => ({
    schedule: 'DAILY',
    scanTypes: ['NMAP'],
    filterSet: { tags: ['prod'] },
    emailNotification: 'NEVER',
    startTime: '2099-01-01T06:00:00Z',
    ...overrides,
  });
  const untilCr = async (name: string, done: (cr: ScheduledScanCr | undefined) => boolean, what: string, namespace = NS) =>
    (await waitFor(async () => read(name, namespace), done, what)) as ScheduledScanCr;
  const listed = async () => (await service.get('/v1/scans/scheduled')).body.data as Array<Record<string, any>>;

  const nightly = {
    schedule: 'DAILY',
    scan_types: ['NMAP'],
    filter_set: { tags: ['prod'] },
    email_notification: 'NEVER',
    start_time: '2099-01-01T06:00:00.000Z',
    name: 'Nightly',
  };

  describe('created through the API', () => {
    it('creates the CR named after the object name, with the spec, the id label and a status that validates against the schema', async () => {
      const created = (await service.post('/v1/scans/scheduled', nightly)).body.data;
      const name = `scheduledscan-${created.id}`;
      const cr = await untilCr(name, (found) => found?.status?.scheduledScanId === created.id, 'the CR status');
      expect(() => parseScheduledScanResource(cr)).not.to.throw();
      expect(cr.spec).to.deep.equal({
        schedule: 'DAILY',
        scanTypes: ['NMAP'],
        filterSet: { tags: ['prod'] },
        emailNotification: 'NEVER',
        startTime: '2099-01-01T06:00:00.000Z',
        name: 'Nightly',
        disabled: false,
      });
      expect(cr.metadata.labels).to.include({ 'vigil.dev/scheduled-scan-id': created.id, 'app.kubernetes.io/managed-by': 'vigil' });
      expect(cr.status).to.include({ nextRun: created.next_run, observedGeneration: 1 });
      expect(cr.status).not.to.have.property('lastRan');
      expect(conditionOf(cr, 'Accepted')).to.include({ status: 'True', reason: 'SpecAccepted' });
      expect(conditionOf(cr, 'Scheduled')).to.include({ status: 'True', reason: 'NextRunSet' });
      expect(await quietWrites(server), 'one create and one status patch').to.equal(2);
    });

    it('replaces the spec on update and shows the recalculated next run; the status says which generation it reflects', async () => {
      const created = (await service.post('/v1/scans/scheduled', nightly)).body.data;
      const name = `scheduledscan-${created.id}`;
      await untilCr(name, (found) => found?.status?.scheduledScanId === created.id, 'the first status');
      await quietWrites(server);
      server.clearRequests();
      const update = {
        schedule: 'WEEKLY',
        filter_set: { target_ids: ['t-1'] },
        email_notification: 'ALWAYS',
        email_to: ['sec@example.com'],
        start_time: '2099-02-01T06:00:00.000Z',
      };
      const updated = (await service.put(`/v1/scans/scheduled/${created.id}`, update)).body.data;
      const cr = await untilCr(name, (found) => found?.status?.observedGeneration === 2, 'the new generation observed');
      expect(cr.spec).to.deep.equal({
        schedule: 'WEEKLY',
        scanTypes: ['NMAP'],
        filterSet: { targetIds: ['t-1'] },
        emailNotification: 'ALWAYS',
        emailTo: ['sec@example.com'],
        startTime: '2099-02-01T06:00:00.000Z',
        disabled: false,
      }); // the omitted name is cleared, as the API's update does
      expect(cr.metadata.generation).to.equal(2);
      expect(cr.status!.nextRun).to.equal(updated.next_run);
      expect(() => parseScheduledScanResource(cr)).not.to.throw();
      await quietWrites(server);
      const writes = scheduledWrites(server).map((request) => `${request.method} ${request.path.split('/').slice(-2).join('/')} ${request.contentType}`);
      expect(writes).to.deep.equal([`PATCH scheduledscans/${name} application/json-patch+json`, `PATCH ${name}/status application/merge-patch+json`]);
      expect((await service.get(`/v1/scans/scheduled/${created.id}`)).body.data.schedule, 'the CR change is not applied back').to.equal('WEEKLY');
    });

    it('deletes the CR with the schedule', async () => {
      const created = (await service.post('/v1/scans/scheduled', nightly)).body.data;
      const name = `scheduledscan-${created.id}`;
      await untilCr(name, (found) => found?.status !== undefined, 'the CR');
      expect((await service.delete(`/v1/scans/scheduled/${created.id}`)).status).to.equal(200);
      await untilCr(name, (found) => found === undefined, 'the CR to be deleted');
      expect(server.deletions.filter((deletion) => deletion.kind === 'ScheduledScan')).to.deep.include({
        apiVersion: API_VERSION,
        kind: 'ScheduledScan',
        namespace: NS,
        name,
        propagationPolicy: 'Orphan',
        appliedPolicy: 'Orphan',
        gracePeriodSeconds: undefined,
      });
      await quietWrites(server);
      expect(await listed()).to.deep.equal([]);
    });
  });

  describe('a run', () => {
    it('writes lastRan and the next run to the status, and the Scans it creates are owned by the ScheduledScan CR', async () => {
      await service.post('/v1/targets', { target: '127.0.0.1', tags: ['prod'] });
      const { start_time: _now, ...runsNow } = nightly; // no start_time: the first run is now
      const created = (await service.post('/v1/scans/scheduled', runsNow)).body.data;
      const name = `scheduledscan-${created.id}`;
      const cr = await untilCr(name, (found) => found?.status?.lastRan !== undefined, 'lastRan on the CR');
      const row = (await service.get(`/v1/scans/scheduled/${created.id}`)).body.data;
      expect(cr.status).to.include({ lastRan: row.last_ran, nextRun: row.next_run });
      expect(Date.parse(cr.status!.nextRun!)).to.be.greaterThan(Date.parse(cr.status!.lastRan!));
      expect(() => parseScheduledScanResource(cr)).not.to.throw();

      const scans = (await service.get('/v1/scans')).body.data as Array<{ id: string; scheduled_by: string | null }>;
      expect(scans.map((scan) => scan.scheduled_by)).to.deep.equal([created.id]);
      const scanCr = await waitFor(
        async () => server.listObjects(API_VERSION, 'Scan', NS).find((object) => object.metadata.labels?.['vigil.dev/scan-id'] === scans[0]!.id),
        (found) => found !== undefined,
        'the Scan CR',
      );
      expect(scanCr!.metadata.ownerReferences).to.deep.equal([
        { apiVersion: API_VERSION, kind: 'ScheduledScan', name, uid: cr.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      // kubectl describe scheduledscan shows the run
      const ran = await waitFor(
        async () =>
          (server.listObjects('v1', 'Event', NS) as unknown as Array<{ reason: string; message: string; involvedObject: { kind: string; name: string } }>).find(
            (event) => event.reason === 'Ran',
          ),
        (event) => event !== undefined,
        'the Ran Event',
      );
      expect(ran!.involvedObject).to.include({ kind: 'ScheduledScan', name });
      expect(ran!.message).to.include(row.last_ran);

      // Deleting the schedule through the API keeps the Scans it ran (their rows stay too); only the owner reference goes.
      await service.delete(`/v1/scans/scheduled/${created.id}`);
      await untilCr(name, (found) => found === undefined, 'the ScheduledScan CR to be deleted');
      const kept = server.getObject({ apiVersion: API_VERSION, kind: 'Scan', namespace: NS, name: scanCr!.metadata.name! });
      expect(kept?.metadata.ownerReferences).to.equal(undefined);
    });
  });

  describe('applied with kubectl', () => {
    it('creates the schedule for the namespace account, listed by the API, and writes its status back without touching the spec', async () => {
      const spec = sampleSpec('scheduledscan-daily.yaml');
      apply('nightly-production', spec);
      const rows = await waitFor(listed, (found) => found.length === 1, 'the applied schedule to be listed');
      expect(rows[0]).to.include({
        name: 'Nightly production scan',
        schedule: 'DAILY',
        time_zone: 'Europe/Berlin',
        email_notification: 'ON_CHANGES',
        disabled: false,
      });
      expect(rows[0]!.targets_filter).to.deep.equal({ target_ids: [], tags: ['production'] });
      expect(rows[0]!.email_to).to.deep.equal(['security@acme.example']);
      const cr = await untilCr('nightly-production', (found) => found?.status?.scheduledScanId === rows[0]!.id, 'the status');
      expect(cr.status).to.include({ nextRun: rows[0]!.next_run, observedGeneration: 1 });
      expect(conditionOf(cr, 'Accepted')).to.include({ status: 'True' });
      expect(cr.spec).to.deep.equal(spec);
      expect(cr.metadata.generation).to.equal(1);
      expect(() => parseScheduledScanResource(cr)).not.to.throw();
      expect(await quietWrites(server), 'one status patch and the finalizer, nothing else').to.equal(2);
      expect(read('nightly-production')!.metadata.finalizers).to.deep.equal(['vigil.dev/scheduledscan']);
    });

    it('updates the schedule when the spec changes, and deletes it with the CR', async () => {
      apply('nightly', daily());
      const [row] = await waitFor(listed, (found) => found.length === 1, 'the applied schedule');
      await untilCr('nightly', (found) => found?.status?.observedGeneration === 1, 'generation 1 observed');
      apply('nightly', daily({ schedule: 'WEEKLY', scanTypes: ['NMAP', 'SSLYZE'], filterSet: { tags: ['Prod', 'edge'] }, disabled: true }));
      const cr = await untilCr('nightly', (found) => found?.status?.observedGeneration === 2, 'generation 2 observed');
      const updated = (await service.get(`/v1/scans/scheduled/${row!.id}`)).body.data;
      expect(updated).to.include({ id: row!.id, schedule: 'WEEKLY', disabled: true, next_run: null, start_time: row!.start_time });
      expect(updated.scan_types).to.deep.equal(['NMAP', 'SSLYZE']);
      expect(updated.targets_filter.tags).to.deep.equal(['prod', 'edge']);
      expect(cr.status).not.to.have.property('nextRun');
      expect(conditionOf(cr, 'Scheduled')).to.include({ status: 'False', reason: 'Disabled' });
      expect(cr.spec.filterSet, 'the applied spec is kept as written').to.deep.equal({ tags: ['Prod', 'edge'] });
      expect(cr.metadata.generation).to.equal(2);

      // kubectl delete: the finalizer holds the CR until its schedule is deleted.
      const response = await fetch(`${server.url}/apis/vigil.dev/v1alpha1/namespaces/${NS}/scheduledscans/nightly`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${server.token}` },
      });
      expect(response.status).to.equal(200);
      await waitFor(listed, (found) => found.length === 0, 'the schedule to be deleted with its CR');
      await untilCr('nightly', (found) => found === undefined, 'the CR released');
      await quietWrites(server);
      expect(
        server.deletions.map((deletion) => deletion.name),
        'nothing left for Vigil to delete in the cluster',
      ).to.deep.equal(['nightly']);
    });

    it('sends no request at all about a ScheduledScan in an unbound namespace', async () => {
      apply('stray', daily(), 'somebody-else');
      apply('after-stray', daily());
      await untilCr('after-stray', (found) => conditionOf(found, 'Accepted') !== undefined, 'the bound one accepted');
      expect(server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', namespace: 'somebody-else', name: 'stray' })!.status).to.equal(
        undefined,
      );
      expect(server.requests.filter((request) => request.path.includes('/namespaces/somebody-else/'))).to.deep.equal([]);
    });

    it('refuses an invalid spec and one the account may not run with conditions naming the reason', async () => {
      apply('no-dates', daily({ schedule: 'CUSTOM' }));
      apply('nessus', daily({ scanTypes: ['NESSUS'] }));
      const invalid = await untilCr('no-dates', (found) => conditionOf(found, 'Accepted') !== undefined, 'InvalidSpec');
      expect(conditionOf(invalid, 'Accepted')).to.include({ status: 'False', reason: 'InvalidSpec' });
      expect(conditionOf(invalid, 'Accepted')!.message).to.match(/schedule CUSTOM needs spec.scheduleDates/);
      const rejected = await untilCr('nessus', (found) => conditionOf(found, 'Accepted') !== undefined, 'Rejected');
      expect(conditionOf(rejected, 'Accepted')).to.include({ status: 'False', reason: 'Rejected' });
      expect(conditionOf(rejected, 'Accepted')!.message).to.match(/NESSUS/);
      expect(await listed()).to.deep.equal([]);

      // Fixed: the schedule is created and the refusal replaced.
      apply('nessus', daily());
      const accepted = await untilCr('nessus', (found) => conditionOf(found, 'Accepted')?.status === 'True', 'the accepted spec');
      expect(accepted.status!.scheduledScanId).to.equal((await listed())[0]!.id);
    });

    it('keeps the schedule as it was when a change to it is refused, and says so', async () => {
      apply('nightly', daily());
      const [row] = await waitFor(listed, (found) => found.length === 1, 'the applied schedule');
      await untilCr('nightly', (found) => found?.status?.observedGeneration === 1, 'generation 1 observed');
      apply('nightly', daily({ scanTypes: ['NESSUS'] }));
      const cr = await untilCr('nightly', (found) => found?.status?.observedGeneration === 2, 'generation 2 observed');
      expect(conditionOf(cr, 'Accepted')).to.include({ status: 'False', reason: 'Rejected' });
      expect(conditionOf(cr, 'Accepted')!.message).to.match(/keeps its previous configuration/);
      expect(cr.status!.nextRun).to.equal(row!.next_run);
      expect((await service.get(`/v1/scans/scheduled/${row!.id}`)).body.data.scan_types).to.deep.equal(['NMAP']);
    });

    it('ends with one schedule shown on the CR when a CR is deleted and applied again at once', async () => {
      apply('nightly', daily());
      await untilCr('nightly', (found) => found?.status?.scheduledScanId !== undefined, 'the first status');
      server.deleteObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', namespace: NS, name: 'nightly' });
      apply('nightly', daily({ schedule: 'WEEKLY' }));
      const rows = await waitFor(listed, (found) => found.length === 1 && found[0]!.schedule === 'WEEKLY', 'one WEEKLY schedule');
      const cr = await untilCr(
        'nightly',
        (found) => found?.status?.scheduledScanId === rows[0]!.id && found?.status?.observedGeneration === 1,
        'the new CR status',
      );
      expect(conditionOf(cr, 'Accepted')).to.include({ status: 'True' });
      await quietWrites(server);
      expect(await listed()).to.have.length(1);
    });

    it('sends a bounded number of requests however often the CR is seen again (no feedback loop)', async () => {
      apply('nightly', daily());
      await waitFor(listed, (found) => found.length === 1, 'the applied schedule');
      await quietWrites(server);
      const afterApply = scheduledWrites(server).length;
      // Re-lists after broken watches, and a label change (no new generation), are seen but not acted on.
      server.breakWatches();
      const cr = read('nightly')!;
      server.setObject({ ...cr, metadata: { ...cr.metadata, labels: { team: 'blue' } } });
      expect(await quietWrites(server)).to.equal(afterApply);
      expect(afterApply).to.equal(2); // its status, and the finalizer
      expect(await listed()).to.have.length(1);
    });
  });

  it('logs a failed status write and retries it', async () => {
    server.failNext({ method: 'PATCH', path: /\/scheduledscans\/[^/]+\/status$/ }, 503);
    const created = (await service.post('/v1/scans/scheduled', nightly)).body.data;
    const cr = await untilCr(`scheduledscan-${created.id}`, (found) => found?.status?.scheduledScanId === created.id, 'the status after the retry');
    expect(cr.status!.nextRun).to.equal(created.next_run);
    expect(service.logLines.some((line) => line.includes('scheduled scan not reconciled; will retry'))).to.equal(true);
  });
});

describe('ScheduledScan custom resources across a restart', function () {
  this.timeout(60_000);

  it('deletes a schedule whose CR was deleted with kubectl while Vigil was down, then releases the CR (finalizer)', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const dir = tempDir();
    const options = { env: { VIGIL_RUNTIME: 'kubernetes' }, kubeConfig: kubeConfig(server), dataDir: dir.path };
    try {
      const first = await TestService.start(options);
      const key = first.apiKey;
      const created = (
        await first.post('/v1/scans/scheduled', {
          schedule: 'DAILY',
          scan_types: ['NMAP'],
          filter_set: { tags: ['prod'] },
          email_notification: 'NEVER',
          start_time: '2099-01-01T06:00:00.000Z',
        })
      ).body.data;
      const name = `scheduledscan-${created.id}`;
      const ref = { apiVersion: API_VERSION, kind: 'ScheduledScan', namespace: NS, name };
      await waitFor(
        async () => server.getObject(ref),
        (cr) => cr?.metadata.finalizers?.includes('vigil.dev/scheduledscan') === true,
        'the CR with its finalizer',
      );
      await first.stop();

      const response = await fetch(`${server.url}/apis/vigil.dev/v1alpha1/namespaces/${NS}/scheduledscans/${name}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${server.token}` },
      });
      expect(response.status).to.equal(200);
      expect(server.getObject(ref)!.metadata.deletionTimestamp, 'held by the finalizer while Vigil is down').to.be.a('string');

      const second = await TestService.start({ ...options, accountName: 'second' });
      try {
        await waitFor(
          async () => server.getObject(ref),
          (cr) => cr === undefined,
          'the CR released',
        );
        expect((await second.get(`/v1/scans/scheduled/${created.id}`, { key })).status, 'the schedule went with its CR').to.equal(404);
      } finally {
        await second.stop();
      }
    } finally {
      await server.stop();
      dir.remove();
    }
  });

  it('finds its CRs in step with their rows and writes nothing', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const dir = tempDir();
    const options = { env: { VIGIL_RUNTIME: 'kubernetes' }, kubeConfig: kubeConfig(server), dataDir: dir.path };
    try {
      const first = await TestService.start(options);
      const created = (
        await first.post('/v1/scans/scheduled', {
          schedule: 'DAILY',
          scan_types: ['NMAP'],
          filter_set: { tags: ['prod'] },
          email_notification: 'NEVER',
          start_time: '2099-01-01T06:00:00.000Z',
        })
      ).body.data;
      const spec = { schedule: 'WEEKLY', scanTypes: ['NMAP'], filterSet: { tags: ['prod'] }, emailNotification: 'NEVER', startTime: '2099-01-01T06:00:00Z' };
      server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', metadata: { name: 'applied', namespace: NS }, spec });
      await waitFor(
        async () => (await first.get('/v1/scans/scheduled')).body.data,
        (rows) => rows.length === 2,
        'both schedules',
      );
      await quietWrites(server);
      await first.stop();
      server.clearRequests();

      const second = await TestService.start({ ...options, accountName: 'second' });
      try {
        expect(await quietWrites(server)).to.equal(0);
        const crs = server.listObjects(API_VERSION, 'ScheduledScan', NS) as ScheduledScanCr[];
        expect(crs.map((cr) => cr.metadata.name).sort()).to.deep.equal(['applied', `scheduledscan-${created.id}`]);
        expect(crs.every((cr) => cr.status?.observedGeneration === cr.metadata.generation)).to.equal(true);
      } finally {
        await second.stop();
      }
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
