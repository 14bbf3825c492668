/**
 * The exact requests the Kubernetes adapters send, pinned with nock: paths,
 * the merge-patch content type, bodies, and how 404 and 409 answers are
 * handled.
 */
import type { ScanResourceMarks } from '../../src/app/ports.js';
import { expect } from 'chai';
import nock from 'nock';
import * as k8s from '@kubernetes/client-node';
import type { Scan } from '../../src/domain/scans/scan.js';
import { ScanCustomResources } from '../../src/runtime/kubernetes/scan-resources.js';
import { ScanResourceFace, type ScanObject, type ScanFaceOptions } from '../../src/runtime/kubernetes/scan-face.js';
import type { ReconcileResult } from '../../src/app/controller/work-queue.js';
import { NO_EVENTS } from '../../src/runtime/kubernetes/event-recorder.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { ScansService } from '../../src/app/scans-service.js';
import { JobObserver } from '../../src/runtime/kubernetes/job-observer.js';
import { FakeTimers } from '../support/fake-timers.js';
import { KubernetesJobRunner } from '../../src/runtime/kubernetes/job-runner.js';
import { defaultJobSettings } from '../../src/runtime/kubernetes/job-settings.js';
import type { UploadsService } from '../../src/app/uploads-service.js';
import { ScanRequestBudget } from '../../src/runtime/kubernetes/request-budget.js';
import { KubernetesEventRecorder } from '../../src/runtime/kubernetes/event-recorder.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';

const SERVER = 'http://kube.test:6443';

function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: SERVER, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'test', user: 'u', namespace: 'vigil-acme' }],
    currentContext: 'c',
  });
  return kc;
}

const scan: Scan = {
  id: 'a1b2c3d4-0000-4000-8000-000000000001',
  accountId: 'acc',
  name: 'scan-a1b2',
  type: 'NMAP',
  state: 'RUNNING',
  progress: 40,
  isAuthenticated: false,
  requestedTargets: [{ targetId: 't1', target: 'scanme.example.com' }],
  resolvedTargets: [],
  skippedTargets: [],
  conditions: [],
  results: [],
  risks: { newOpen: [], stillOpen: [], closed: [] },
  scheduledBy: null,
  reportId: null,
  createdAt: '2026-11-21T00:00:00.000Z',
  startedAt: '2026-11-21T00:00:01.000Z',
  finishedAt: null,
};

/** No scan deleted through the API, no resource expired. */
const NO_MARKS: ScanResourceMarks = {
  deletedThroughApi: () => false,
  forgetDeletion: () => undefined,
  markExpired: () => undefined,
  isExpired: () => false,
  finishedWithResources: () => [],
};

const SCANS = '/apis/vigil.dev/v1alpha1/namespaces/vigil-acme/scans';

/**
 * The Scan face over the CR and the row the getters give (account acme in
 * vigil-acme), for exact requests; options replace the defaults. A pass is
 * what the Scan reconciler does with its face, the workload held still
 * (its own requests are the Job runner's, pinned below).
 */
function reconcilerOver(
  cached: () => ScanObject | undefined,
  row: () => Scan | undefined,
  options: Partial<ScanFaceOptions> = {},
): { reconcile(key: string): Promise<ReconcileResult> } {
  const kc = options.kubeConfig ?? kubeConfig();
  const account = { id: 'acc', name: 'acme', namespace: 'vigil-acme' } as Account;
  const face = new ScanResourceFace({
    kubeConfig: kc,
    scanResources: new ScanCustomResources(kc),
    service: {} as ScansService,
    marks: NO_MARKS,
    cached,
    events: NO_EVENTS,
    clock: { now: () => new Date('2026-11-21T00:00:02.000Z') },
    ...options,
  });
  return {
    reconcile: async (key) => {
      const received = await face.receive(key, key.startsWith('vigil-acme/') ? account : undefined, row());
      return 'done' in received ? received.done : received.project(row() ?? received.row);
    },
  };
}

describe('Kubernetes adapters: exact requests (nock)', () => {
  before(() => nock.disableNetConnect());
  after(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
  afterEach(() => {
    expect(nock.pendingMocks(), 'requests expected but not sent').to.deep.equal([]);
    nock.cleanAll();
  });

  it('ScanCustomResources.create creates the CR and, on 409 AlreadyExists, reads it; the Job takes its uid as owner', async () => {
    nock(SERVER)
      .post(SCANS, (body) => body.metadata.name === 'scan-a1b2' && body.spec.type === 'NMAP' && body.metadata.labels['vigil.dev/scan-id'] === scan.id)
      .reply(409, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', code: 409 })
      .get(`${SCANS}/scan-a1b2`)
      .reply(200, { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name: 'scan-a1b2', namespace: 'vigil-acme', uid: 'uid-42' } });
    const resources = new ScanCustomResources(kubeConfig());
    const object = await resources.create(scan, 'vigil-acme');
    expect(object.metadata?.uid).to.equal('uid-42');
    expect(resources.ownerFor(scan, 'vigil-acme')).to.deep.equal({ name: 'scan-a1b2', namespace: 'vigil-acme', uid: 'uid-42' });
    expect(() => resources.ownerFor({ ...scan, name: 'scan-other' }, 'vigil-acme'), 'a CR not made yet: the start is tried again').to.throw(/not created yet/);
  });

  /** A Scan reconciler over one cached CR and one row, for exact requests. */
  function reconcilerWith(object: ScanObject | undefined, row: Scan | undefined) {
    return reconcilerOver(
      () => object,
      () => row,
    );
  }
  const cr = (status?: unknown): ScanObject => ({
    metadata: {
      name: 'scan-a1b2',
      namespace: 'vigil-acme',
      uid: 'uid-42',
      generation: 1,
      resourceVersion: '7',
      labels: { 'vigil.dev/scan-id': scan.id },
      finalizers: ['vigil.dev/scan'],
    },
    spec: { type: 'NMAP', targets: ['scanme.example.com'] },
    ...(status === undefined ? {} : { status: status as ScanObject['status'] }),
  });

  it('the Scan reconciler merge-patches the status subresource with the row, and sends nothing once the cached CR shows it', async () => {
    let contentType: string | undefined;
    let sent: { status: { state: string; progress: number } } | undefined;
    nock(SERVER)
      .patch(`${SCANS}/scan-a1b2/status`)
      .reply(function (_uri, body) {
        contentType = this.req.headers['content-type'] as string;
        sent = (typeof body === 'string' ? JSON.parse(body) : body) as typeof sent;
        return [200, {}];
      });
    await reconcilerWith(cr(), scan).reconcile('vigil-acme/scan-a1b2');
    expect(contentType).to.equal('application/merge-patch+json');
    expect(sent!.status).to.include({ state: 'RUNNING', progress: 40, scanId: scan.id, observedGeneration: 1 });
    await reconcilerWith(cr(sent!.status), scan).reconcile('vigil-acme/scan-a1b2'); // nock refuses any further request
    await reconcilerWith(cr(sent!.status), { ...scan, progress: 80 }).reconcile('vigil-acme/scan-a1b2'); // progress alone writes nothing
  });

  it('the Scan reconciler writes a row that moved on while its cache was behind once, the latest, and not again when the cache catches up with its earlier write', async () => {
    const sent: Array<{ state: string; progress: number }> = [];
    let version = 7;
    nock(SERVER)
      .patch(`${SCANS}/scan-a1b2/status`)
      .times(2)
      .reply(function (_uri, body) {
        sent.push(((typeof body === 'string' ? JSON.parse(body) : body) as { status: { state: string; progress: number } }).status);
        version += 1;
        return [200, { metadata: { name: 'scan-a1b2', resourceVersion: String(version) } }];
      });
    let row: Scan = { ...scan, progress: 0 };
    let cached: ScanObject = cr();
    const kc = kubeConfig();
    const reconciler = reconcilerOver(
      () => cached,
      () => row,
      { kubeConfig: kc },
    );
    await reconciler.reconcile('vigil-acme/scan-a1b2'); // RUNNING 0 over version 7, the server answers 8
    row = { ...row, state: 'SUCCEEDED', progress: 100 };
    await reconciler.reconcile('vigil-acme/scan-a1b2'); // the cache still shows 7: the latest, SUCCEEDED 100, written once (9)
    const first = sent[0]!;
    cached = { ...cr(first), metadata: { ...cr().metadata, resourceVersion: '8' } };
    await reconciler.reconcile('vigil-acme/scan-a1b2'); // the cache shows the first write: behind, and the server holds the second
    cached = { ...cr(sent[1]), metadata: { ...cr().metadata, resourceVersion: '9' } };
    await reconciler.reconcile('vigil-acme/scan-a1b2'); // caught up
    expect(sent.map((status) => `${status.state} ${status.progress}`)).to.deep.equal(['RUNNING 0', 'SUCCEEDED 100']);
    // A status changed by hand after that (a newer version) is put right again.
    cached = { ...cr({ ...sent[1], state: 'FAILED' }), metadata: { ...cr().metadata, resourceVersion: '10' } };
    nock(SERVER).patch(`${SCANS}/scan-a1b2/status`).reply(200, {});
    await reconciler.reconcile('vigil-acme/scan-a1b2');
  });

  it('the Scan reconciler releases its finalizer with a merge patch that carries the resourceVersion it read', async () => {
    let body: unknown;
    nock(SERVER)
      .patch(`${SCANS}/scan-a1b2`)
      .reply(function (_uri, requestBody) {
        body = typeof requestBody === 'string' ? JSON.parse(requestBody) : requestBody;
        return [200, {}];
      });
    const deleting = cr();
    deleting.metadata!.deletionTimestamp = '2026-11-21T00:00:01Z';
    await reconcilerWith(deleting, undefined).reconcile('vigil-acme/scan-a1b2');
    expect(body).to.deep.equal({ metadata: { finalizers: [], resourceVersion: '7' } });
  });

  it('stop deletes the Job with foreground propagation, and a 404 counts as already gone', async () => {
    let body: unknown;
    nock(SERVER)
      .delete('/apis/batch/v1/namespaces/vigil-acme/jobs/scan-a1b2-scanner')
      .query(true)
      .reply(function (_uri, requestBody) {
        body = { query: new URL(this.req.path, SERVER).searchParams.get('propagationPolicy'), requestBody };
        return [200, { kind: 'Status', status: 'Success' }];
      })
      .delete('/apis/batch/v1/namespaces/vigil-acme/jobs/scan-a1b2-scanner')
      .query(true)
      .reply(404, { kind: 'Status', code: 404, reason: 'NotFound' });
    const kc = kubeConfig();
    const runner = new KubernetesJobRunner({
      kubeConfig: kc,
      scanResources: new ScanCustomResources(kc),
      uploads: {} as UploadsService,
      jobSettings: defaultJobSettings('0.1.0'),
      uploadUrl: 'http://vigil:8080',
      locate: () => ({ name: 'scan-a1b2', namespace: 'vigil-acme', type: 'NMAP' }),
      observer: new JobObserver({
        kubeConfig: kc,
        namespaces: fixedNamespaces(['vigil-acme'], new FakeTimers()),
        timers: new FakeTimers(),
        onError: () => undefined,
      }),
    });
    await runner.stop(scan.id);
    await runner.stop(scan.id);
    const sent = body as { query: string | null; requestBody: unknown };
    const inBody =
      typeof sent.requestBody === 'object' && sent.requestBody !== null ? (sent.requestBody as { propagationPolicy?: string }).propagationPolicy : undefined;
    expect(sent.query ?? inBody).to.equal('Foreground');
  });

  it("start creates the Job, then the scan's one Secret (token and inputs, immutable) in one request, owned by the Job's uid, which the Job reads each part of where it is needed", async () => {
    const bodies: {
      secret?: { metadata: { name: string; ownerReferences: unknown[] }; immutable: boolean; stringData: Record<string, string> };
      job?: k8s.V1Job;
    } = {};
    const sent: string[] = [];
    nock(SERVER)
      .post('/api/v1/namespaces/vigil-acme/serviceaccounts')
      .reply(201, {})
      .post('/apis/batch/v1/namespaces/vigil-acme/jobs')
      .reply(function (_uri, body) {
        sent.push('job');
        bodies.job = body as k8s.V1Job;
        return [201, { ...bodies.job, metadata: { ...bodies.job.metadata, uid: 'job-uid-7' } }];
      })
      .post('/api/v1/namespaces/vigil-acme/secrets')
      .reply(function (_uri, body) {
        sent.push('secret');
        bodies.secret = body as typeof bodies.secret;
        return [201, body];
      });
    const kc = kubeConfig();
    const counted: string[] = [];
    const runner = new KubernetesJobRunner({
      kubeConfig: kc,
      scanResources: new ScanCustomResources(kc, undefined, () => 'uid-42'),
      uploads: { issueToken: () => 'tok_nock_0123456789' } as unknown as UploadsService,
      jobSettings: defaultJobSettings('0.1.0'),
      uploadUrl: 'http://vigil:8080',
      locate: () => ({ name: 'scan-a1b2', namespace: 'vigil-acme', type: 'NUCLEI' }),
      observer: new JobObserver({
        kubeConfig: kc,
        namespaces: fixedNamespaces(['vigil-acme'], new FakeTimers()),
        timers: new FakeTimers(),
        onError: () => undefined,
      }),
      onRequest: (scanId) => counted.push(scanId),
    });
    await runner.start({ ...scan, type: 'NUCLEI', state: 'QUEUED' }, [{ targetId: 't1', target: 'https://web.example.com/', addresses: ['93.184.216.34'] }]);
    const secret = bodies.secret!;
    expect(secret.metadata.name).to.equal('scan-a1b2-secret');
    expect(secret.immutable).to.equal(true);
    expect(sent).to.deep.equal(['job', 'secret']);
    expect(secret.metadata.ownerReferences).to.deep.equal([
      { apiVersion: 'batch/v1', kind: 'Job', name: 'scan-a1b2-scanner', uid: 'job-uid-7', controller: false, blockOwnerDeletion: false },
    ]);
    expect(secret.stringData.token).to.equal('tok_nock_0123456789');
    expect(secret.stringData['nuclei-hosts']).to.equal('93.184.216.34 web.example.com\n');
    const pod = bodies.job!.spec!.template.spec!;
    const inputKeys = Object.keys(secret.stringData).filter((key) => key !== 'token');
    expect(pod.volumes!.find((volume) => volume.name === 'input')!.secret).to.deep.equal({
      secretName: 'scan-a1b2-secret',
      defaultMode: 0o440,
      items: inputKeys.map((key) => ({ key, path: key })),
    });
    const upload = pod.containers.find((container) => container.name === 'upload')!;
    expect(upload.env!.find((env) => env.name === 'VIGIL_UPLOAD_TOKEN')!.valueFrom).to.deep.equal({ secretKeyRef: { name: 'scan-a1b2-secret', key: 'token' } });
    expect(JSON.stringify(bodies.job)).to.not.include('tok_nock_0123456789');
    expect(counted, "the Job and the Secret count against the scan's budget; the namespace's ServiceAccount does not").to.deep.equal([scan.id, scan.id]);
  });

  it('start answered 409 for a Job the cache has not listed yet (a restart) fails, to be tried again, and writes no Secret without its owner', async () => {
    const scope = nock(SERVER)
      .post('/api/v1/namespaces/vigil-acme/serviceaccounts')
      .reply(201, {})
      .post('/apis/batch/v1/namespaces/vigil-acme/jobs')
      .reply(409, { kind: 'Status', code: 409, reason: 'AlreadyExists' });
    const kc = kubeConfig();
    const runner = new KubernetesJobRunner({
      kubeConfig: kc,
      scanResources: new ScanCustomResources(kc, undefined, () => 'uid-42'),
      uploads: { issueToken: () => 'tok_nock_0123456789' } as unknown as UploadsService,
      jobSettings: defaultJobSettings('0.1.0'),
      uploadUrl: 'http://vigil:8080',
      locate: () => ({ name: 'scan-a1b2', namespace: 'vigil-acme', type: 'NMAP' }),
      observer: new JobObserver({
        kubeConfig: kc,
        namespaces: fixedNamespaces(['vigil-acme'], new FakeTimers()),
        timers: new FakeTimers(),
        onError: () => undefined,
      }),
    });
    let failed: unknown;
    await runner
      .start({ ...scan, state: 'QUEUED' }, [{ targetId: 't1', target: '93.184.216.34', addresses: ['93.184.216.34'] }])
      .catch((error: unknown) => (failed = error));
    expect(String(failed)).to.match(/the Job scan-a1b2-scanner exists but is not in the Job cache yet/);
    expect(scope.isDone()).to.equal(true);
  });

  it("the Scan reconciler writes progress alone as a merge patch of the status when the scan's budget has room, 10 s after its RUNNING write and its one Running Event", async () => {
    const sent: Array<{ status: { state: string; progress: number } }> = [];
    const events: Array<{ reason: string; message: string }> = [];
    nock(SERVER)
      .patch(`${SCANS}/scan-a1b2/status`)
      .times(2)
      .reply(function (_uri, body) {
        expect(this.req.headers['content-type']).to.equal('application/merge-patch+json');
        sent.push((typeof body === 'string' ? JSON.parse(body) : body) as (typeof sent)[number]);
        return [200, {}];
      })
      .post('/api/v1/namespaces/vigil-acme/events')
      .reply(function (_uri, body) {
        events.push(body as (typeof events)[number]);
        return [201, body];
      });
    const kc = kubeConfig();
    const budget = new ScanRequestBudget();
    let now = new Date('2026-11-21T00:00:02.000Z').getTime();
    let object: ScanObject = {
      metadata: {
        name: 'scan-a1b2',
        namespace: 'vigil-acme',
        uid: 'uid-42',
        generation: 1,
        resourceVersion: '7',
        labels: { 'vigil.dev/scan-id': scan.id },
        finalizers: ['vigil.dev/scan'],
      },
      spec: { type: 'NMAP', targets: ['scanme.example.com'] },
    };
    let row: Scan = {
      ...scan,
      progress: 0,
      conditions: [
        {
          type: 'WorkloadReady',
          status: 'True',
          reason: 'WorkloadStarted',
          message: 'the NMAP scanner started on 1 target(s)',
          lastTransitionTime: '2026-11-21T00:00:01.000Z',
        },
      ],
    };
    const timers = new FakeTimers(now);
    const recorder = new KubernetesEventRecorder({
      kubeConfig: kc,
      timers,
      defaults: { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan' },
      onError: () => undefined,
    });
    const reconciler = reconcilerOver(
      () => object,
      () => row,
      { kubeConfig: kc, events: recorder, clock: { now: () => new Date(now) }, budget },
    );
    budget.started(scan.id);
    // The CR, the Job, the Secret, the followed log and (below) the RUNNING write and its Event make 6: room for one write and the 3 at the end.
    budget.spend(scan.id, 4);
    await reconciler.reconcile('vigil-acme/scan-a1b2');
    await recorder.flush();
    object = { ...object, metadata: { ...object.metadata, resourceVersion: '8' }, status: sent[0]!.status as ScanObject['status'] };
    row = { ...row, progress: 50 };
    now += 10_000;
    await reconciler.reconcile('vigil-acme/scan-a1b2');
    expect(sent.map((body) => `${body.status.state} ${body.status.progress}`)).to.deep.equal(['RUNNING 0', 'RUNNING 50']);
    expect(events.map((event) => event.reason)).to.deep.equal(['Running']);
    expect(budget.spent(scan.id)).to.equal(7);
  });
});
