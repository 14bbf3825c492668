/**
 * The Scan controller driving the Kubernetes runner against the in-process
 * fake API server through the real client-node: the same reconcile logic as
 * the embedded runtime, Jobs instead of child processes.
 */
import { expect } from 'chai';
import { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { FakeTimers } from '../support/fake-timers.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import { NUCLEI_TEMPLATES_VERSION, SCANNER_IMAGES } from '../../src/domain/scanners/images.js';
import { KubernetesJobRunner } from '../../src/runtime/kubernetes/job-runner.js';
import { JobObserver } from '../../src/runtime/kubernetes/job-observer.js';
import { scanJobName, scanSecretName, uploadTokenSecretName } from '../../src/runtime/kubernetes/job-manifest.js';
import { kubeScanHarness, type KubeScanHarness } from '../support/kube-scan-harness.js';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

describe('Kubernetes runtime: the Scan controller with Jobs on a fake API server', () => {
  let server: FakeKubeApiServer;
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let runner: KubernetesJobRunner;
  let observer: JobObserver;
  let timers: FakeTimers;
  let controller: ScanReconciler;
  let harness: KubeScanHarness;

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
    account = core.accounts.createAccount({ name: 'acme', namespace: 'vigil-acme' }).account;
    harness = await kubeScanHarness(server, core);
    ({ observer, runner, controller, timers } = harness);
  });
  afterEach(async () => {
    await observer.stop();
    await server.stop();
    core.db.close();
    dir.remove();
  });

  const startScan = (): Scan => core.scans.start(account, { type: 'NMAP', targets: ['scanme.example.com'] })[0]!;
  const jobOf = (scan: Scan) => server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'vigil-acme', name: scanJobName(scan.name) });
  /** Sets the Job's conditions on the server, then waits until the observer's cache shows them (a watch event away). */
  const setJobConditions = async (scan: Scan, conditions: unknown[]) => {
    server.setObject({ ...jobOf(scan)!, status: { conditions } } as never);
    await waitFor(
      async () => observer.job('vigil-acme', scanJobName(scan.name))?.status?.conditions?.length ?? 0,
      (length) => length === conditions.length,
      'the Job in the cache',
    );
  };
  const secretOf = (scan: Scan) => server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: scanSecretName(scan.name) });
  const tokenOf = (scan: Scan) => (secretOf(scan) as unknown as { stringData: { token: string } }).stringData.token;
  const creations = () => server.requests.filter((request) => request.method === 'POST').map((request) => request.path);

  it('creates the Scan CR, the Job owned by the CR, then the upload-token Secret owned by the Job, and moves the Scan to RUNNING', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    expect(creations(), 'the CR as the pass receives the Scan, then the workload').to.deep.equal([
      '/apis/vigil.dev/v1alpha1/namespaces/vigil-acme/scans',
      '/api/v1/namespaces/vigil-acme/serviceaccounts',
      '/apis/batch/v1/namespaces/vigil-acme/jobs',
      '/api/v1/namespaces/vigil-acme/secrets',
    ]);
    const cr = server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: 'vigil-acme', name: scan.name })!;
    const job = jobOf(scan) as unknown as { metadata: { ownerReferences: Array<{ uid: string; kind: string }> } };
    expect(job.metadata.ownerReferences[0]).to.include({ kind: 'Scan', uid: (cr as { metadata: { uid: string } }).metadata.uid });
    const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: uploadTokenSecretName(scan.name) }) as unknown as {
      stringData: { token: string };
    };
    expect(secret.stringData.token).to.have.length.greaterThan(30);
    expect(secretOf(scan)!.metadata.ownerReferences, 'the Job alone: its deletion takes the Secret').to.deep.equal([
      { apiVersion: 'batch/v1', kind: 'Job', name: scanJobName(scan.name), uid: jobOf(scan)!.metadata.uid, controller: false, blockOwnerDeletion: false },
    ]);
    expect(JSON.stringify(jobOf(scan))).not.to.include(secret.stringData.token); // the Job only references the Secret
    expect(core.scans.get(account, scan.id).state).to.equal('RUNNING');
  });

  it('creates the scanner ServiceAccount the Job runs under in the tenant namespace: no token mounted, nothing bound to it', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    const account = server.getObject({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'vigil-acme', name: 'vigil-scanner' }) as unknown as {
      automountServiceAccountToken: boolean;
    };
    expect(account.automountServiceAccountToken).to.equal(false);
    expect((jobOf(scan) as unknown as { spec: { template: { spec: { serviceAccountName: string } } } }).spec.template.spec.serviceAccountName).to.equal(
      'vigil-scanner',
    );
    expect(server.requests.filter((request) => request.path.includes('rbac.authorization.k8s.io'))).to.deep.equal([]);
  });

  it('takes a scanner ServiceAccount that already exists (AlreadyExists is success)', async () => {
    server.setObject({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'vigil-scanner', namespace: 'vigil-acme' },
      automountServiceAccountToken: false,
    } as never);
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).state).to.equal('RUNNING');
  });

  it('fails the Scan with NamespaceNotWritable, naming the namespace and the chart value, when the API server answers 403', async () => {
    server.failNext((request) => request.path.endsWith('/serviceaccounts'), 403, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'serviceaccounts is forbidden: User "system:serviceaccount:vigil:vigil" cannot create resource "serviceaccounts" in the namespace "vigil-acme"',
    });
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    const failed = core.scans.get(account, scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.conditions.at(-1)).to.include({ type: 'Failed', reason: 'NamespaceNotWritable' });
    expect(failed.conditions.at(-1)!.message)
      .to.include('namespace vigil-acme')
      .and.to.include('cannot create resource "serviceaccounts"')
      .and.to.include('add vigil-acme to tenants.namespaces');
    expect(jobOf(scan)).to.equal(undefined);
  });

  it('retries any other refusal of the API server instead of failing the Scan', async () => {
    server.failNext((request) => request.path.endsWith('/serviceaccounts'), 500);
    const scan = startScan();
    let thrown: unknown;
    await controller.reconcile(controller.keyOf(scan)!).catch((error: unknown) => (thrown = error));
    expect(thrown).to.be.instanceOf(Error);
    expect(core.scans.get(account, scan.id).state).to.equal('QUEUED');
  });

  it('hands every scanner the address it checked, though the name answers a private address on the next lookup (issue 16)', async () => {
    const lookups: string[] = [];
    const rebinding = new ScanReconciler({
      scans: core.scanRepository,
      accounts: core.accountRepository,
      face: harness.face,
      runner,
      resolver: {
        resolve4: async (host) => {
          const first = !lookups.includes(host);
          lookups.push(host);
          return first ? ['93.184.216.34'] : ['10.0.0.5'];
        },
      },
      resultFiles: core.resultFiles,
      history: core.history,
      staging: core.staging,
      clock: { now: () => new Date() },
      timers: new FakeTimers(),
      maxConcurrentScans: 10,
      allowTargets: [],
      onError: (key, error) => {
        throw new Error(`reconcile of ${key} failed: ${String(error)}`);
      },
    });
    const started = (type: Scan['type'], target: string) => core.scans.start(account, { type, targets: [target] })[0]!;
    const scans = {
      nmap: started('NMAP', 'nmap.example.com'),
      sslyze: started('SSLYZE', 'tls.example.com'),
      nuclei: started('NUCLEI', 'https://web.example.com/'),
      zap: started('OWASP_ZAP', 'https://shop.example.com/'),
    };
    for (const scan of Object.values(scans)) await rebinding.reconcile(rebinding.keyOf(scan)!);
    const scanner = (scan: Scan) =>
      (
        jobOf(scan) as unknown as {
          spec: { template: { spec: { initContainers: Array<{ name: string; args: string[]; env?: Array<{ name: string; value?: string }> }> } } };
        }
      ).spec.template.spec.initContainers.find((each) => each.name === 'scanner')!;
    const inputs = (scan: Scan) =>
      (
        server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: scanSecretName(scan.name) }) as unknown as {
          stringData: Record<string, string>;
        }
      ).stringData;

    expect(scanner(scans.nmap).args.at(-1)).to.equal('93.184.216.34');
    expect(scanner(scans.sslyze).args.at(-1)).to.equal('tls.example.com:443{93.184.216.34}');
    expect(inputs(scans.nuclei)['nuclei-hosts']).to.equal('93.184.216.34 web.example.com\n');
    expect(scanner(scans.nuclei).env).to.deep.include({ name: 'HOSTS_PATH', value: '/vigil/output/nuclei-hosts' });
    expect(inputs(scans.zap)['zap-hosts']).to.equal('127.0.0.1 localhost\n93.184.216.34 shop.example.com\n');
    expect(JSON.stringify(server.requests)).to.not.include('10.0.0.5');
    expect(lookups).to.deep.equal(['nmap.example.com', 'tls.example.com', 'web.example.com', 'shop.example.com']);
  });

  it('creates no second Job when the start is repeated (after a crash), and replaces its Secret with a new token, owned by the same Job', async () => {
    const scan = startScan();
    const targets = [{ targetId: scan.requestedTargets[0]!.targetId, target: 'scanme.example.com', addresses: ['93.184.216.34'] }];
    await harness.scanResources.create(scan, 'vigil-acme'); // what the reconciler's pass does before the start
    await runner.start(scan, targets);
    const job = jobOf(scan)!;
    const oldToken = tokenOf(scan);
    server.clearRequests();
    await runner.start(scan, targets);
    expect(server.requests.map((request) => `${request.method} ${request.path.split('/').pop()}`)).to.deep.equal([
      'POST secrets',
      `DELETE ${scanSecretName(scan.name)}`,
      'POST secrets',
    ]);
    expect(jobOf(scan)!.metadata.uid).to.equal(job.metadata.uid);
    expect(secretOf(scan)!.metadata.ownerReferences?.map((owner) => owner.uid)).to.deep.equal([job.metadata.uid]);
    expect(tokenOf(scan)).to.not.equal(oldToken);
    expect(() => core.uploads.assertToken(scan.id, oldToken), 'the old token').to.throw(/not valid/);
    core.uploads.assertToken(scan.id, tokenOf(scan));
  });

  it('creates the Secret of a Job a crash left without one, when the start is repeated', async () => {
    const scan = startScan();
    const targets = [{ targetId: scan.requestedTargets[0]!.targetId, target: 'scanme.example.com', addresses: ['93.184.216.34'] }];
    await harness.scanResources.create(scan, 'vigil-acme'); // what the reconciler's pass does before the start
    await runner.start(scan, targets);
    server.deleteObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: scanSecretName(scan.name) });
    server.clearRequests();
    await runner.start(scan, targets);
    expect(server.requests.map((request) => `${request.method} ${request.path.split('/').pop()}`)).to.deep.equal(['POST secrets']);
    expect(secretOf(scan)!.metadata.ownerReferences?.map((owner) => owner.uid)).to.deep.equal([jobOf(scan)!.metadata.uid]);
    core.uploads.assertToken(scan.id, tokenOf(scan));
  });

  it('collects the uploaded files once the Job completes and moves the Scan to SUCCEEDED', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    const token = (
      server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: uploadTokenSecretName(scan.name) }) as unknown as {
        stringData: { token: string };
      }
    ).stringData.token;
    await core.uploads.accept(scan.id, token, 'nmap.xml', [Buffer.from('<nmaprun/>')]);
    await setJobConditions(scan, [{ type: 'Complete', status: 'True' }]);
    await controller.reconcile(controller.keyOf(scan)!);
    const done = core.scans.get(account, scan.id);
    expect(done).to.include({ state: 'SUCCEEDED', progress: 100 });
    // The uploaded output, then the scan's PDF, made by the same controller as in the embedded runtime.
    expect(done.results.map((result) => result.contentType)).to.deep.equal(['application/xml', 'application/pdf']);
    await core.scanPdfs.idle();
    const { file, content } = await core.scans.openResult(account, done.results[1]!.resultId);
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.from(chunk as Uint8Array));
    expect(file.size).to.equal(Buffer.concat(chunks).length).and.to.be.greaterThan(1000);
    expect(Buffer.concat(chunks).subarray(0, 5).toString('latin1')).to.equal('%PDF-');
  });

  it('records on a NUCLEI Scan the templates release its default image carries', async () => {
    const scan = core.scans.start(account, { type: 'NUCLEI', targets: ['https://www.example.com/'] })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    const token = (
      server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: uploadTokenSecretName(scan.name) }) as unknown as {
        stringData: { token: string };
      }
    ).stringData.token;
    await core.uploads.accept(scan.id, token, 'nuclei.jsonl', [Buffer.from('')]);
    await setJobConditions(scan, [{ type: 'Complete', status: 'True' }]);
    await controller.reconcile(controller.keyOf(scan)!);
    const done = core.scans.get(account, scan.id);
    expect(done.state).to.equal('SUCCEEDED');
    expect(done.conditions.at(-1)!.message).to.equal(
      `the scanner finished and its results are recorded; it ran with nuclei-templates ${NUCLEI_TEMPLATES_VERSION} (baked into ${SCANNER_IMAGES.nuclei})`,
    );
  });

  it('fails the Scan when the Job completed without uploading its results: the Job stays, its Secret (the inputs) is deleted', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    await setJobConditions(scan, [{ type: 'Complete', status: 'True' }]);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).conditions.at(-1)).to.include({ reason: 'OutputMissing' });
    expect(jobOf(scan)).to.not.equal(undefined);
    expect(secretOf(scan)).to.equal(undefined);
  });

  it('fails the Scan with DeadlineExceeded when the Job exceeds its deadline', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    await setJobConditions(scan, [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }]);
    await controller.reconcile(controller.keyOf(scan)!);
    const failed = core.scans.get(account, scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.conditions.at(-1)).to.include({ reason: 'DeadlineExceeded' });
    expect(failed.conditions.at(-1)!.message).to.match(/longer than specified deadline/);
  });

  const runningPod = (scan: Scan, name = 'scanner-pod-1') =>
    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'vigil-acme',
        labels: { 'app.kubernetes.io/managed-by': 'vigil', 'vigil.dev/scan-id': scan.id, 'vigil.dev/scan-type': 'nmap' },
      },
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'scanner', image: 'nmap', ready: false, restartCount: 0, imageID: '', state: { running: { startedAt: new Date().toISOString() } } },
        ],
      },
    } as never);

  it("follows the scanner container's log with one streamed request and moves the Scan's progress as lines arrive", async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    server.setPodLog('vigil-acme', 'scanner-pod-1', 'Starting Nmap\nConnect Scan Timing: About 12.00% done\n', 'scanner');
    runningPod(scan);
    await waitFor(
      async () => observer.progress(scan.id),
      (progress) => progress === 12,
      'the first progress line',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).progress).to.equal(12);
    server.setPodLog(
      'vigil-acme',
      'scanner-pod-1',
      'Starting Nmap\nConnect Scan Timing: About 12.00% done\nService scan Timing: About 42.50% done; ETC: 10:42\n',
      'scanner',
    );
    await waitFor(
      async () => observer.progress(scan.id),
      (progress) => progress !== undefined && progress > 12,
      'the next progress line',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).progress).to.equal(42);
    const logReads = server.requests.filter((request) => request.path.endsWith('/pods/scanner-pod-1/log'));
    expect(logReads).to.have.length(1);
    expect(logReads[0]!.query).to.include({ container: 'scanner', follow: 'true', tailLines: '50' });
  });

  it('sends no request while a scan runs: its Job, pods and progress come from watches', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    runningPod(scan);
    await waitFor(
      async () => server.openLogFollowers,
      (open) => open === 1,
      'the followed log',
    );
    server.clearRequests();
    for (let minute = 0; minute < 60; minute++) {
      timers.advance(60_000);
      await controller.reconcile(controller.keyOf(scan)!);
    }
    server.setPodLog('vigil-acme', 'scanner-pod-1', 'Connect Scan Timing: About 30.00% done\n', 'scanner');
    await waitFor(
      async () => observer.progress(scan.id),
      (progress) => progress === 30,
      'progress',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id)).to.include({ state: 'RUNNING', progress: 30 });
    expect(server.requests.filter((request) => !request.watch)).to.deep.equal([]);
    expect(timers.pending, 'no timed requeue of a running scan').to.equal(0);
  });

  it('fails a Scan whose scanner image cannot be pulled once the grace has passed, with a condition naming the image', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'scanner-pod-1',
        namespace: 'vigil-acme',
        labels: { 'app.kubernetes.io/managed-by': 'vigil', 'vigil.dev/scan-id': scan.id, 'vigil.dev/scan-type': 'nmap' },
      },
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          {
            name: 'scanner',
            image: 'registry.example/nmap:9',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } },
          },
        ],
      },
    } as never);
    await waitFor(
      async () => observer.health(scan.id, observer.job('vigil-acme', scanJobName(scan.name))!),
      (health) => health.phase === 'Running' && health.recheckAfterMs === 60_000,
      'the pull problem in the cache',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).state).to.equal('RUNNING');
    timers.advance(60_000); // the controller's requeue at the end of the grace fires
    await controller.reconcile(controller.keyOf(scan)!);
    const failed = core.scans.get(account, scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.conditions.at(-1)).to.include({ type: 'Failed', reason: 'ImagePullFailed' });
    expect(failed.conditions.at(-1)!.message).to.include('registry.example/nmap:9');
  });

  it('fails a Scan whose Job cannot create its pod, with the reason of its FailedCreate event, after one read of its events', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    server.setObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'scanner.1', namespace: 'vigil-acme' },
      involvedObject: { kind: 'Job', name: scanJobName(scan.name), namespace: 'vigil-acme' },
      reason: 'FailedCreate',
      type: 'Warning',
      message: 'Error creating: pods "x" is forbidden: error looking up service account vigil-acme/vigil-scanner: serviceaccount "vigil-scanner" not found',
    } as never);
    await controller.reconcile(controller.keyOf(scan)!);
    server.clearRequests();
    timers.advance(30_000);
    await controller.reconcile(controller.keyOf(scan)!);
    const failed = core.scans.get(account, scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.conditions.at(-1)).to.include({ type: 'Failed', reason: 'ServiceAccountMissing' });
    const reads = server.requests.filter((request) => request.method === 'GET' && !request.watch);
    expect(reads.map((request) => request.path)).to.deep.equal(['/api/v1/namespaces/vigil-acme/events']);
  });

  it("keeps a scan's token and inputs in one Secret, created in one request, deleted with the collected Job (no request of its own), the token revoked", async () => {
    const scan = core.scans.start(account, { type: 'NUCLEI', targets: ['https://www.example.com/'] })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    const secrets = server.listObjects('v1', 'Secret', 'vigil-acme') as unknown as Array<{ metadata: { name: string }; stringData: Record<string, string> }>;
    expect(secrets.map((secret) => secret.metadata.name)).to.deep.equal([scanSecretName(scan.name)]);
    expect(Object.keys(secrets[0]!.stringData), 'the token and the nuclei inputs').to.include('token').and.to.have.length.greaterThan(1);
    expect(server.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/secrets'))).to.have.length(1);
    const token = (
      server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: uploadTokenSecretName(scan.name) }) as unknown as {
        stringData: { token: string };
      }
    ).stringData.token;
    await core.uploads.accept(scan.id, token, 'nuclei.jsonl', [Buffer.from('')]);
    await setJobConditions(scan, [{ type: 'Complete', status: 'True' }]);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).state).to.equal('SUCCEEDED');
    expect(server.listObjects('v1', 'Secret', 'vigil-acme')).to.deep.equal([]);
    expect(
      server.requests.filter((request) => request.method === 'DELETE').map((request) => `${request.path.split('/').pop()} ${request.query.propagationPolicy}`),
    ).to.deep.equal([`${scanJobName(scan.name)} Background`]);
    let refused: unknown;
    await core.uploads.accept(scan.id, token, 'nuclei.jsonl', [Buffer.from('')]).catch((error: unknown) => (refused = error));
    expect(String(refused)).to.match(/not valid for this scan/);
  });

  it('stops a running Scan by deleting its Job with foreground propagation, its Secret with it', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    core.scans.stop(account, scan.id);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(server.deletions.filter((deletion) => deletion.kind === 'Job')).to.deep.include.members([
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        namespace: 'vigil-acme',
        name: scanJobName(scan.name),
        propagationPolicy: 'Foreground',
        appliedPolicy: 'Foreground',
        gracePeriodSeconds: undefined,
      },
    ]);
    expect(core.scans.get(account, scan.id).state).to.equal('STOPPED');
    expect(secretOf(scan)).to.equal(undefined);
    expect(
      server.requests.filter((request) => request.method === 'DELETE' && request.path.includes('/secrets')),
      'no deletion of its own',
    ).to.deep.equal([]);
  });

  it('fails the Scan as WorkloadLost when its Job disappears', async () => {
    const scan = startScan();
    await controller.reconcile(controller.keyOf(scan)!);
    await waitFor(
      async () => observer.job('vigil-acme', scanJobName(scan.name))?.metadata?.uid,
      (uid) => uid !== undefined,
      'the Job in the cache',
    );
    server.deleteObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'vigil-acme', name: scanJobName(scan.name) });
    await waitFor(
      async () => observer.job('vigil-acme', scanJobName(scan.name)),
      (job) => job === undefined,
      'the Job gone from the cache',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).conditions.at(-1)).to.include({ reason: 'WorkloadLost' });
  });
});

/** What the scanner Job's nmap would upload: one open port on the scanned host. */
const NMAP_REPORT =
  '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/>' +
  '<ports><port protocol="tcp" portid="22"><state state="open"/><service name="ssh"/></port></ports></host></nmaprun>';

describe('VIGIL_RUNTIME=kubernetes, end to end through the API and the upload endpoint', function () {
  this.timeout(30_000);

  it('runs a Scan as a Job in the account namespace and finishes it from the uploaded results', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }, kubeConfig: kubeConfig(server) });
    try {
      const namespace = 'vigil-test-account';
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const jobRef = { apiVersion: 'batch/v1', kind: 'Job', namespace, name: scanJobName(`scan-${scan.id}`) };
      await waitFor(
        async () => server.getObject(jobRef),
        (job) => job !== undefined,
        'the scanner Job',
      );
      const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name: uploadTokenSecretName(`scan-${scan.id}`) }) as unknown as {
        stringData: { token: string };
      };
      const upload = await fetch(`${service.baseUrl}/internal/v1/scans/${scan.id}/results/nmap.xml`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${secret.stringData.token}` },
        body: NMAP_REPORT,
      });
      expect(upload.status).to.equal(200);
      server.setObject({ ...server.getObject(jobRef)!, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as never);
      const done = await waitFor(
        async () => (await service.get(`/v1/scans/${scan.id}`)).body.data,
        (found) => found.state === 'SUCCEEDED',
        'the Scan to succeed',
      );
      const file = await service.get(`/v1/results/${done.results[0].result_id}`);
      expect(file.text).to.equal(NMAP_REPORT);

      // ...and parsed by the collector into the risk history, as in the embedded runtime.
      expect(done.risks.new_open).to.have.length(1);
      const risk = (await service.get(`/v1/risks/${done.risks.new_open[0].risk_id}`)).body.data;
      expect(risk).to.deep.include({ status: 'OPEN', target: '127.0.0.1' });
      expect(risk.risk_definition).to.include({ scan_type: 'NMAP', title: 'Open port 22/tcp (ssh)' });

      // kubectl get scans shows the same: the CR's status follows the Scan through merge patches on /status.
      const crRef = { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace, name: `scan-${scan.id}` };
      const cr = await waitFor(
        async () => server.getObject(crRef) as unknown as { status?: { state: string; progress: number; scanId: string; counts: object } },
        (found) => found?.status?.state === 'SUCCEEDED',
        'the CR status to show SUCCEEDED',
      );
      expect(cr.status).to.deep.include({ scanId: scan.id, progress: 100, counts: { newOpen: 1, stillOpen: 0, closed: 0 } });
      const statusWrites = server.requests.filter((request) => request.path.endsWith(`/scans/scan-${scan.id}/status`));
      expect(statusWrites.length).to.be.greaterThan(1);
      expect(statusWrites.every((request) => request.method === 'PATCH' && request.contentType === 'application/merge-patch+json')).to.equal(true);
      const bodies = statusWrites.map((request) => JSON.stringify(request.body));
      expect(new Set(bodies).size, 'an unchanged status is never written twice').to.equal(bodies.length);
    } finally {
      await service.stop();
      await server.stop();
    }
  });

  it('tells scanner pods to upload to VIGIL_UPLOAD_URL, not to the public URL people use', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const env = {
      VIGIL_RUNTIME: 'kubernetes',
      VIGIL_ALLOW_TARGETS: '127.0.0.0/8',
      VIGIL_PUBLIC_URL: 'https://vigil.example.com',
      VIGIL_UPLOAD_URL: 'http://vigil.vigil.svc:8080',
    };
    const service = await TestService.start({ env, kubeConfig: kubeConfig(server) });
    try {
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const jobRef = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'vigil-test-account', name: scanJobName(`scan-${scan.id}`) };
      const job = (await waitFor(
        async () => server.getObject(jobRef),
        (found) => found !== undefined,
        'the scanner Job',
      )) as unknown as { spec: { template: { spec: { containers: Array<{ name: string; args: string[] }> } } } };
      const upload = job.spec.template.spec.containers.find((container) => container.name === 'upload')!;
      expect(upload.args[upload.args.indexOf('--url') + 1]).to.equal('http://vigil.vigil.svc:8080');
    } finally {
      await service.stop();
      await server.stop();
    }
  });
});
