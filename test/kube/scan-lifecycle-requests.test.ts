/**
 * What a Scan costs the API server over its whole life (issue 13: at most 10
 * requests, Events included, whatever its duration, its progress lines, and
 * whether it waited for a slot): the whole service in the kubernetes
 * runtime against the fake API server, scans created through the API, their
 * pods running with lines of progress, results uploaded, Jobs Complete.
 * Every request that names a scan is counted against it; what is paid once
 * per process (the informers' lists and watches, the scanner ServiceAccount
 * per namespace) is not a scan's, and is pinned apart. A scan's own 9 leave
 * room within 10 for its share of those 5 once a process has run 5 scans.
 */
import { expect } from 'chai';
import { scanJobName, uploadTokenSecretName } from '../../src/runtime/kubernetes/job-manifest.js';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-test-account';
const NMAP_REPORT = '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/><ports></ports></host></nmaprun>';
const progressLine = (percent: number) => `Connect Scan Timing: About ${percent.toFixed(2)}% done; ETC: 10:42\n`;

/** "POST secrets", "PATCH scans/status": the verb and the resource. */
function kindOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const rest = parts.slice(parts.indexOf('namespaces') + 2);
  return `${request.method} ${rest[0]}${rest[2] === undefined ? '' : `/${rest[2]}`}`;
}

interface Started {
  id: string;
  name: string;
}

describe('Kubernetes runtime: API requests per Scan over its whole life', function () {
  this.timeout(120_000);
  let server: FakeKubeApiServer;
  let service: TestService;

  async function startService(env: Record<string, string> = {}): Promise<void> {
    server = new FakeKubeApiServer();
    await server.start();
    service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8', LOG_LEVEL: 'error', ...env }, kubeConfig: kubeConfig(server) });
  }

  afterEach(async () => {
    await service?.stop();
    await server?.stop();
  });

  const cr = (name: string) => server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: NS, name });
  const shown = (name: string) => cr(name)?.status as { state?: string; progress?: number } | undefined;
  const job = (name: string) => server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: NS, name: scanJobName(name) });
  const apiProgress = async (scan: Started) => ((await service.get(`/v1/scans/${scan.id}`)).body.data as { progress: number }).progress;

  async function create(target: string): Promise<Started> {
    const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: [target] })).body.data as { id: string };
    return { id: scan.id, name: `scan-${scan.id}` };
  }

  /** The scan's pod runs; each progress figure is one more line of its followed log, seen through the API before the next. */
  async function run(scan: Started, progress: readonly number[]): Promise<void> {
    await waitFor(async () => job(scan.name), (found) => found !== undefined, 'the Job');
    await waitFor(async () => shown(scan.name), (status) => status?.state === 'RUNNING', 'RUNNING on the CR');
    const labels = (job(scan.name)!.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const pod = `${job(scan.name)!.metadata.name}-pod`;
    let log = progressLine(progress[0]!);
    server.setPodLog(NS, pod, log, 'scanner');
    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace: NS, labels },
      status: { phase: 'Pending', initContainerStatuses: [{ name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] },
    } as KubeObject);
    await waitFor(() => apiProgress(scan), (value) => value === progress[0], `${progress[0]} % in the API`);
    for (const percent of progress.slice(1)) {
      log += progressLine(percent);
      server.setPodLog(NS, pod, log, 'scanner');
      await waitFor(() => apiProgress(scan), (value) => value === percent, `${percent} % in the API`);
    }
  }

  async function finish(scan: Started): Promise<void> {
    const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: uploadTokenSecretName(scan.name) }) as unknown as { stringData: { token: string } };
    await service.vigil.uploads.accept(scan.id, secret.stringData.token, 'nmap.xml', [Buffer.from(NMAP_REPORT)]);
    server.setObject({ ...job(scan.name)!, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
    await waitFor(async () => shown(scan.name), (status) => status?.state === 'SUCCEEDED', 'SUCCEEDED on the CR');
    await waitFor(async () => server.listObjects('v1', 'Secret', NS).filter((object) => object.metadata.name?.includes(scan.name)).length, (count) => count === 0, 'the Secrets deleted');
  }

  const eventsOf = (name: string) => server.requests.filter((request) => request.path.endsWith('/events') && (request.body as { involvedObject?: { name?: string } }).involvedObject?.name === name);
  const requestsOf = (scan: Started) =>
    server.requests.filter((request) => !request.watch && (request.path.includes(scan.name) || JSON.stringify(request.body ?? '').includes(scan.name) || Object.values(request.query).some((value) => value.includes(scan.id))));

  /** 9 a scan: 2 status writes, 2 Events, and one each to create the CR, Secret and Job, follow the log and delete the Secrets. */
  async function expectNine(scans: readonly Started[]): Promise<void> {
    await waitFor(async () => scans.map((scan) => eventsOf(scan.name).length), (counts) => counts.every((count) => count >= 2), 'the Events');
    for (const scan of scans) {
      const requests = requestsOf(scan);
      const statuses = requests
        .filter((request) => kindOf(request) === 'PATCH scans/status')
        .map((request) => (request.body as { status: { state: string; progress: number } }).status)
        .map((status) => `${status.state} ${status.progress}`);
      expect(statuses, `${scan.name}: written when it turned RUNNING and when it ended, never for progress alone or QUEUED`).to.deep.equal(['RUNNING 0', 'SUCCEEDED 100']);
      const byKind: Record<string, number> = {};
      for (const request of requests) byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
      expect(byKind, scan.name).to.deep.equal({
        'POST scans': 1,
        'POST secrets': 1,
        'POST jobs': 1,
        'GET pods/log': 1,
        'PATCH scans/status': 2,
        'POST events': 2,
        'DELETE secrets': 1,
      });
      expect(requests, scan.name).to.have.length(9);
      const reasons = eventsOf(scan.name).map((request) => request.body as { reason: string; message: string });
      expect(reasons.map((event) => event.reason)).to.deep.equal(['Running', 'Succeeded']);
      expect(reasons[0]!.message, 'the Running Event names the Job it created').to.equal(`created Job ${scanJobName(scan.name)}: the NMAP scanner started on 1 target(s)`);
    }
  }

  /** What no scan owns: the four informers' first lists and the scanner ServiceAccount of the namespace, once however many scans start together. */
  function expectPerProcess(scans: readonly Started[]): void {
    const owned = new Set(scans.flatMap(requestsOf));
    const shared = server.requests.filter((request) => !request.watch && !owned.has(request));
    expect(shared.map((request) => `${request.method} ${request.path.split('/').pop()}`).sort()).to.deep.equal(['GET jobs', 'GET pods', 'GET scans', 'GET scheduledscans', 'POST serviceaccounts']);
  }

  it('costs 9 requests a scan started at once, Events included, with one line of progress; scans starting together share one ServiceAccount request', async () => {
    await startService();
    const scans = await Promise.all(['127.0.0.1', '127.0.0.2', '127.0.0.3'].map(create));
    for (const scan of scans) {
      await run(scan, [50]);
      await finish(scan);
    }
    await expectNine(scans);
    expectPerProcess(scans);
  });

  it('costs 9 requests a scan that ran long with many lines of progress: progress rides along with the writes that happen anyway', async () => {
    await startService();
    const scan = await create('127.0.0.1');
    await run(scan, [5, 10, 25, 40, 50, 60, 75, 90, 99]);
    expect(shown(scan.name)?.progress, 'the CR shows the progress of its last write; the API shows it as it moves').to.equal(0);
    await finish(scan);
    await expectNine([scan]);
  });

  it('costs 9 requests a scan that waited for a slot: its CR shows no status while it is QUEUED', async () => {
    await startService({ VIGIL_MAX_CONCURRENT_SCANS: '1' });
    const first = await create('127.0.0.1');
    const second = await create('127.0.0.2');
    await waitFor(async () => job(first.name), (found) => found !== undefined, 'the first Job');
    await waitFor(async () => cr(second.name), (found) => found !== undefined, 'the waiting scan CR');
    expect(((await service.get(`/v1/scans/${second.id}`)).body.data as { state: string }).state).to.equal('QUEUED');
    await run(first, [50]);
    expect(cr(second.name)!.status, 'no status while it waits').to.equal(undefined);
    expect(job(second.name)).to.equal(undefined);
    await finish(first);
    await run(second, [50]);
    await finish(second);
    await expectNine([first, second]);
    expectPerProcess([first, second]);
  });
});
