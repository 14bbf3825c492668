/**
 * Tenancy by namespace (DESIGN.md decision 6): Scans applied with kubectl in
 * a bound namespace run for that account exactly as API-created ones; in an
 * unbound namespace Vigil sends no request at all (it watches only bound
 * namespaces, so another install may own the Scan). Real client-node
 * informers against the fake API server, including a watch that breaks.
 */
import { expect } from 'chai';
import type { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { startKubeService, stopKubeService } from '../support/kube-service.js';
import type { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

type ScanObject = {
  metadata: { labels?: Record<string, string> };
  status?: { state?: string; conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
};

describe('Scans applied with kubectl (VIGIL_RUNTIME=kubernetes)', function () {
  this.timeout(30_000);
  let server: FakeKubeApiServer;
  let service: TestService;

  beforeEach(async () => ({ server, service } = await startKubeService()));
  afterEach(() => stopKubeService({ server, service }));

  const apply = (namespace: string, name: string, spec: Record<string, unknown>) =>
    server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name, namespace }, spec } as never);
  const read = (namespace: string, name: string) =>
    server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace, name }) as unknown as ScanObject;

  it('starts a Scan applied in the bound namespace for its account, visible in GET /v1/scans, and labels the CR with its id', async () => {
    apply('vigil-test-account', 'nightly-nmap', { type: 'NMAP', targets: ['127.0.0.1'] });
    const listed = await waitFor(
      async () => (await service.get('/v1/scans')).body.data as Array<{ id: string; type: string; requested_targets: Array<{ target: string }> }>,
      (scans) => scans.length === 1,
      'the applied scan to be listed',
    );
    expect(listed[0]).to.include({ type: 'NMAP' });
    expect(listed[0]!.requested_targets.map((target) => target.target)).to.deep.equal(['127.0.0.1']);
    const cr = await waitFor(
      async () => read('vigil-test-account', 'nightly-nmap'),
      (found) => found.metadata.labels?.['vigil.dev/scan-id'] === listed[0]!.id,
      'the CR to be labelled',
    );
    expect(cr.metadata.labels?.['vigil.dev/scan-id']).to.equal(listed[0]!.id);
    // created as a Target, as an API request would
    expect((await service.get('/v1/targets')).body.data.map((target: { target: string }) => target.target)).to.deep.equal(['127.0.0.1']);
    // and the CR shows its status
    await waitFor(
      async () => read('vigil-test-account', 'nightly-nmap'),
      (found) => typeof found.status?.state === 'string',
      'the CR status',
    );
  });

  it('gives an imported scan its CR showing SUCCEEDED: the upload tells the Scan reconciler, as a POST does', async () => {
    const source = (await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'lab' })).body.data as { id: string };
    const form = new FormData();
    form.append('source_id', source.id);
    form.append('scan_type', 'NMAP');
    const report =
      '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/><ports><port protocol="tcp" portid="22"><state state="open"/><service name="ssh"/></port></ports></host></nmaprun>';
    form.append('file', new Blob([report], { type: 'application/xml' }), 'nmap.xml');
    const uploaded = await service.request('POST', '/v1/results', { formData: form });
    expect(uploaded.status, uploaded.text).to.equal(200);
    const [scan] = (await service.get('/v1/scans')).body.data as Array<{ id: string }>;
    const cr = await waitFor(
      async () => read('vigil-test-account', `import-${scan!.id}`),
      (found) => found?.status?.state === 'SUCCEEDED',
      'the imported scan CR showing SUCCEEDED',
      20_000,
    );
    expect(cr.metadata.labels?.['vigil.dev/scan-id']).to.equal(scan!.id);
  });

  it('sends no request at all about a Scan in an unbound namespace: it does not watch there', async () => {
    apply('somebody-else', 'stray', { type: 'NMAP', targets: ['127.0.0.1'] });
    // Applied after the stray one: once it is adopted, the stray one would have been seen too, had that namespace been watched.
    apply('vigil-test-account', 'after-stray', { type: 'NMAP', targets: ['127.0.0.1'] });
    await waitFor(
      async () => read('vigil-test-account', 'after-stray'),
      (found) => found.metadata.labels?.['vigil.dev/scan-id'] !== undefined,
      'the bound Scan adopted',
    );
    expect(read('somebody-else', 'stray').status).to.equal(undefined);
    expect(
      server.requests.filter((request) => !request.path.includes('/namespaces/vigil-test-account/')).map((request) => `${request.method} ${request.path}`),
    ).to.deep.equal([]);
  });

  it('refuses a Scan whose spec breaks a rule with a condition naming it, and runs nothing', async () => {
    apply('vigil-test-account', 'two-selectors', { type: 'NMAP', targets: ['127.0.0.1'], tags: ['x'] });
    apply('vigil-test-account', 'private-target', { type: 'NMAP', targets: ['10.0.0.1'] });
    const invalid = await waitFor(
      async () => read('vigil-test-account', 'two-selectors'),
      (found) => (found.status?.conditions ?? []).length > 0,
      'InvalidSpec',
    );
    expect(invalid.status!.conditions![0]).to.include({ reason: 'InvalidSpec' });
    const rejected = await waitFor(
      async () => read('vigil-test-account', 'private-target'),
      (found) => (found.status?.conditions ?? []).length > 0,
      'Rejected',
    );
    expect(rejected.status!.conditions![0]).to.include({ reason: 'Rejected' });
    expect(rejected.status!.conditions![0]!.message).to.match(/10\.0\.0\.0\/8/);
    expect((await service.get('/v1/scans')).body.data).to.deep.equal([]);
  });

  it('keeps adopting applied Scans after the watch breaks', async () => {
    apply('vigil-test-account', 'before-break', { type: 'NMAP', targets: ['127.0.0.1'] });
    await waitFor(
      async () => (await service.get('/v1/scans')).body.data,
      (scans) => scans.length === 1,
      'the first scan',
    );
    expect(server.breakWatches()).to.be.greaterThan(0);
    apply('vigil-test-account', 'after-break', { type: 'NMAP', targets: ['127.0.0.2'] });
    await waitFor(
      async () => (await service.get('/v1/scans')).body.data,
      (scans) => scans.length === 2,
      'the scan applied after the break',
    );
    expect(service.logLines.some((line) => line.includes('scan informer stopped; restarting'))).to.equal(true);
    // The restarts and the requests are in the metrics too (issue 28).
    const metrics = (await service.get('/metrics', { key: null })).text;
    expect(metrics).to.match(/^vigil_informer_restarts_total\{resource="scans"\} [1-9]/m);
    expect(metrics).to.match(/^vigil_kubernetes_requests_total\{verb="patch",code="200"\} [1-9]/m);
    expect(metrics).to.match(/^vigil_workqueue_adds_total\{controller="scan"\} [1-9]/m);
  });

  it('does not start an applied Scan twice when it is seen again', async () => {
    apply('vigil-test-account', 'once', { type: 'NMAP', targets: ['127.0.0.1'] });
    await waitFor(
      async () => read('vigil-test-account', 'once'),
      (found) => found.metadata.labels?.['vigil.dev/scan-id'] !== undefined,
      'the label',
    );
    const cr = read('vigil-test-account', 'once');
    server.setObject({ ...(cr as object), metadata: { ...cr.metadata, labels: {} } } as never); // someone strips the label
    await waitFor(
      async () => read('vigil-test-account', 'once'),
      (found) => found.metadata.labels?.['vigil.dev/scan-id'] !== undefined,
      'the label again',
    );
    expect((await service.get('/v1/scans')).body.data).to.have.length(1);
  });
});
