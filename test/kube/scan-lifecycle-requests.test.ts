/**
 * What a Scan costs the API server over its whole life (issue 13: at most 10
 * requests, Events included, whatever its duration, its progress lines, and
 * whether it waited for a slot), and that its CR shows progress moving where
 * that budget allows: the whole service in the kubernetes runtime against
 * the fake API server, scans created through the API or applied as CRs,
 * their pods running with lines of progress, results uploaded, Jobs
 * Complete. Every request that names a scan is counted against it; what is
 * paid once per process (the informers' lists and watches, the scanner
 * ServiceAccount per namespace) is not a scan's, and is pinned apart.
 *
 * The service's clock is the wall clock plus an offset the test moves 11 s
 * on before each progress line, so the rule "not within 10 s of the last
 * status write" is passed without waiting (nothing here depends on timing).
 *
 * Which cases write progress mid-run (a status write of its own, 0 < p < 100):
 * every case with 9 requests of its own before it (created through the API,
 * at once or after waiting; applied with kubectl and started at once; NUCLEI
 * with its inputs) writes one, for 10 in all; a Scan applied with kubectl
 * that waited for a slot spent one more (its Accepted Event) and writes none,
 * for 10. The one deletion at the end is the collected Job's (issue 27: no TTL,
 * so a Job finished during an outage of Vigil is still collected), which
 * takes the scan's Secret, owned by the Job.
 */
import { expect } from 'chai';
import { scanJobName, uploadTokenSecretName } from '../../src/runtime/kubernetes/job-manifest.js';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-test-account';
const NMAP_REPORT =
  '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/><ports></ports></host></nmaprun>';
type Type = 'NMAP' | 'NUCLEI';
const PROGRESS: Record<Type, (percent: number) => string> = {
  NMAP: (percent) => `Connect Scan Timing: About ${percent.toFixed(2)}% done; ETC: 10:42\n`,
  NUCLEI: (percent) => `${JSON.stringify({ requests: String(percent), total: '100', percent: String(percent) })}\n`,
};
const RESULT: Record<Type, { file: string; content: string }> = {
  NMAP: { file: 'nmap.xml', content: NMAP_REPORT },
  NUCLEI: { file: 'nuclei.jsonl', content: '' },
};

/** "POST secrets", "PATCH scans/status": the verb and the resource. */
function kindOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const rest = parts.slice(parts.indexOf('namespaces') + 2);
  return `${request.method} ${rest[0]}${rest[2] === undefined ? '' : `/${rest[2]}`}`;
}

interface Started {
  id: string;
  name: string;
  type: Type;
}

describe('Kubernetes runtime: API requests per Scan over its whole life', function () {
  this.timeout(120_000);
  let server: FakeKubeApiServer;
  let service: TestService;
  /** The service's clock runs this far ahead of the wall clock. */
  let offsetMs = 0;
  const later = () => (offsetMs += 11_000);

  async function startService(env: Record<string, string> = {}): Promise<void> {
    server = new FakeKubeApiServer();
    await server.start();
    offsetMs = 0;
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    service = await TestService.start({
      env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8', LOG_LEVEL: 'error', ...env },
      kubeConfig: kubeConfig(server),
      clock,
    });
  }

  afterEach(async () => {
    await service?.stop();
    await server?.stop();
  });

  const cr = (name: string) => server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: NS, name });
  const shown = (name: string) => cr(name)?.status as { state?: string; progress?: number } | undefined;
  const job = (name: string) => server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: NS, name: scanJobName(name) });
  const apiProgress = async (scan: Started) => ((await service.get(`/v1/scans/${scan.id}`)).body.data as { progress: number }).progress;

  async function create(target: string, type: Type = 'NMAP'): Promise<Started> {
    const scan = (await service.post('/v1/scans', { type, targets: [type === 'NUCLEI' ? `https://${target}/` : target] })).body.data as { id: string };
    return { id: scan.id, name: `scan-${scan.id}`, type };
  }

  /** A Scan applied with kubectl: its id is the label the controller puts on its CR. */
  async function apply(name: string, target: string): Promise<Started> {
    server.setObject({
      apiVersion: 'vigil.dev/v1alpha1',
      kind: 'Scan',
      metadata: { name, namespace: NS },
      spec: { type: 'NMAP', targets: [target] },
    } as KubeObject);
    const id = await waitFor(
      async () => cr(name)?.metadata.labels?.['vigil.dev/scan-id'],
      (found) => found !== undefined,
      'the applied CR labelled',
    );
    return { id: id!, name, type: 'NMAP' };
  }

  /**
   * The scan's pod runs; each progress figure is one more line of its
   * followed log, seen through the API before the next, each 11 s later on
   * the service's clock than the status write before it.
   */
  async function run(scan: Started, progress: readonly number[]): Promise<void> {
    const progressLine = PROGRESS[scan.type];
    await waitFor(
      async () => job(scan.name),
      (found) => found !== undefined,
      'the Job',
    );
    await waitFor(
      async () => shown(scan.name),
      (status) => status?.state === 'RUNNING',
      'RUNNING on the CR',
    );
    const labels = (job(scan.name)!.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const pod = `${job(scan.name)!.metadata.name}-pod`;
    let log = progressLine(progress[0]!);
    later();
    server.setPodLog(NS, pod, log, 'scanner');
    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace: NS, labels },
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } },
        ],
      },
    } as KubeObject);
    await waitFor(
      () => apiProgress(scan),
      (value) => value === progress[0],
      `${progress[0]} % in the API`,
    );
    for (const percent of progress.slice(1)) {
      later();
      log += progressLine(percent);
      server.setPodLog(NS, pod, log, 'scanner');
      await waitFor(
        () => apiProgress(scan),
        (value) => value === percent,
        `${percent} % in the API`,
      );
    }
  }

  async function finish(scan: Started): Promise<void> {
    const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: uploadTokenSecretName(scan.name) }) as unknown as {
      stringData: { token: string };
    };
    const result = RESULT[scan.type];
    await service.vigil.uploads.accept(scan.id, secret.stringData.token, result.file, [Buffer.from(result.content)]);
    server.setObject({ ...job(scan.name)!, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
    await waitFor(
      async () => shown(scan.name),
      (status) => status?.state === 'SUCCEEDED',
      'SUCCEEDED on the CR',
    );
    await waitFor(
      async () => job(scan.name),
      (found) => found === undefined,
      'the collected Job deleted',
    );
    expect(
      server.listObjects('v1', 'Secret', NS).filter((object) => object.metadata.name?.includes(scan.name)),
      'the Secret, gone with its Job',
    ).to.deep.equal([]);
  }

  const eventsOf = (name: string) =>
    server.requests.filter(
      (request) => request.path.endsWith('/events') && (request.body as { involvedObject?: { name?: string } }).involvedObject?.name === name,
    );
  const requestsOf = (scan: Started) =>
    server.requests.filter(
      (request) =>
        !request.watch &&
        (request.path.includes(scan.name) ||
          JSON.stringify(request.body ?? '').includes(scan.name) ||
          Object.values(request.query).some((value) => value.includes(scan.id))),
    );

  /** The progress written to a scan's CR, by each status write in order: `STATE progress`. */
  const statusWrites = (scan: Started) =>
    requestsOf(scan)
      .filter((request) => kindOf(request) === 'PATCH scans/status')
      .map((request) => (request.body as { status: { state: string; progress: number } }).status)
      .map((status) => `${status.state} ${status.progress}`);

  interface Expected {
    /** The status writes: RUNNING, then the progress written on its own, then the end. */
    statuses: string[];
    /**
     * Through the API (Vigil creates the CR: POST scans) or applied with kubectl (the user created it; Vigil patches in its label and finalizer:
     * PATCH scans).
     */
    created?: 'api' | 'kubectl';
    events: Array<{ reason: string; message?: string }>;
  }

  /** The scan's own requests, by kind, and that they are at most 10. */
  async function expectRequests(scans: readonly Started[], expected: (scan: Started) => Expected): Promise<void> {
    await waitFor(
      async () => scans.map((scan) => eventsOf(scan.name).length),
      (counts) => counts.every((count, index) => count >= expected(scans[index]!).events.length),
      'the Events',
    );
    for (const scan of scans) {
      const want = expected(scan);
      const requests = requestsOf(scan);
      expect(statusWrites(scan), scan.name).to.deep.equal(want.statuses);
      const byKind: Record<string, number> = {};
      for (const request of requests) byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
      expect(byKind, scan.name).to.deep.equal({
        ...(want.created === 'kubectl' ? { 'PATCH scans': 1 } : { 'POST scans': 1 }),
        'POST secrets': 1,
        'POST jobs': 1,
        'GET pods/log': 1,
        'PATCH scans/status': want.statuses.length,
        'POST events': want.events.length,
        'DELETE jobs': 1,
      });
      expect(requests.length, `${scan.name}: 10 of its own, issue 13's bound`).to.equal(10);
      const events = eventsOf(scan.name).map((request) => request.body as { reason: string; message: string });
      expect(
        events.map((event) => event.reason),
        scan.name,
      ).to.deep.equal(want.events.map((event) => event.reason));
      want.events.forEach(
        (event, index) => event.message === undefined || expect(events[index]!.message, `${scan.name} ${event.reason}`).to.equal(event.message),
      );
    }
  }

  const running = (scan: Started) => `created Job ${scanJobName(scan.name)}: the ${scan.type} scanner started on 1 target(s)`;
  /**
   * 10 a scan: 3 status writes (RUNNING, one step of progress, the end), 2 Events, and one each to create the CR, Job and Secret, follow the log and
   * delete the collected Job (its Secret with it).
   */
  const tenWithProgress =
    (progress: number) =>
    (scan: Started): Expected => ({
      statuses: ['RUNNING 0', `RUNNING ${progress}`, 'SUCCEEDED 100'],
      events: [{ reason: 'Running', message: running(scan) }, { reason: 'Succeeded' }],
    });
  const progressOnTheCr = (scan: Started, progress: number) =>
    waitFor(
      async () => shown(scan.name)?.progress,
      (shownProgress) => shownProgress === progress,
      'the progress on the CR, mid-run',
    );

  /** What no scan owns: the four informers' first lists and the scanner ServiceAccount of the namespace, once however many scans start together. */
  function expectPerProcess(scans: readonly Started[]): void {
    const owned = new Set(scans.flatMap(requestsOf));
    const shared = server.requests.filter((request) => !request.watch && !owned.has(request));
    expect(shared.map((request) => `${request.method} ${request.path.split('/').pop()}`).sort()).to.deep.equal([
      'GET jobs',
      'GET pods',
      'GET scans',
      'GET scheduledscans',
      'POST serviceaccounts',
    ]);
  }

  it('costs 10 requests a scan started at once, Events and the deletion of its collected Job included, one of them the CR showing its progress mid-run; scans starting together share one ServiceAccount request', async () => {
    await startService();
    const scans = await Promise.all(['127.0.0.1', '127.0.0.2', '127.0.0.3'].map((target) => create(target)));
    for (const scan of scans) {
      await run(scan, [50]);
      await progressOnTheCr(scan, 50);
      await finish(scan);
    }
    await expectRequests(scans, tenWithProgress(50));
    expectPerProcess(scans);
  });

  it('costs 10 requests a scan that ran long with many lines of progress: one step of progress on the CR, the rest rides along with the end', async () => {
    await startService();
    const scan = await create('127.0.0.1');
    await run(scan, [5, 10, 25, 40, 50, 60, 75, 90, 99]);
    expect(shown(scan.name)?.progress, 'the first 25-point step was written; after it the budget keeps room for the end only').to.equal(25);
    await finish(scan);
    await expectRequests([scan], tenWithProgress(25));
  });

  it('costs 10 requests a scan that waited for a slot: its CR shows no status while it is QUEUED, and its progress once it runs', async () => {
    await startService({ VIGIL_MAX_CONCURRENT_SCANS: '1' });
    const first = await create('127.0.0.1');
    const second = await create('127.0.0.2');
    await waitFor(
      async () => job(first.name),
      (found) => found !== undefined,
      'the first Job',
    );
    await waitFor(
      async () => cr(second.name),
      (found) => found !== undefined,
      'the waiting scan CR',
    );
    expect(((await service.get(`/v1/scans/${second.id}`)).body.data as { state: string }).state).to.equal('QUEUED');
    await run(first, [50]);
    expect(cr(second.name)!.status, 'no status while it waits').to.equal(undefined);
    expect(job(second.name)).to.equal(undefined);
    await finish(first);
    await run(second, [50]);
    await progressOnTheCr(second, 50);
    await finish(second);
    await expectRequests([first, second], tenWithProgress(50));
    expectPerProcess([first, second]);
  });

  it('costs 10 requests a NUCLEI scan with its inputs: token and inputs in one Secret, one request', async () => {
    await startService();
    const scan = await create('127.0.0.1', 'NUCLEI');
    await run(scan, [30]);
    await progressOnTheCr(scan, 30);
    const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: uploadTokenSecretName(scan.name) }) as unknown as {
      stringData: Record<string, string>;
    };
    expect(Object.keys(secret.stringData)).to.include('token').and.to.include('nuclei-hosts');
    await finish(scan);
    await expectRequests([scan], tenWithProgress(30));
  });

  it('costs 10 requests a Scan applied with kubectl that starts at once: its finalizer patch, and one Event saying it was accepted and started', async () => {
    await startService();
    const scan = await apply('nightly', '127.0.0.1');
    await run(scan, [50]);
    await progressOnTheCr(scan, 50);
    await finish(scan);
    await expectRequests([scan], (each) => ({
      created: 'kubectl',
      statuses: ['RUNNING 0', 'RUNNING 50', 'SUCCEEDED 100'],
      events: [
        { reason: 'Running', message: `accepted and started (Vigil started NMAP scan ${each.id} for account test-account); ${running(each)}` },
        { reason: 'Succeeded' },
      ],
    }));
  });

  it('costs 10 requests a Scan applied with kubectl that waited for a slot: its Accepted Event at once, and no room left for progress on its own', async () => {
    await startService({ VIGIL_MAX_CONCURRENT_SCANS: '1' });
    const first = await create('127.0.0.1');
    await waitFor(
      async () => job(first.name),
      (found) => found !== undefined,
      'the first Job',
    );
    const applied = await apply('waiting', '127.0.0.2');
    await waitFor(
      async () => eventsOf(applied.name).length,
      (count) => count === 1,
      'the Accepted Event while it waits',
    );
    await run(first, [50]);
    await finish(first);
    await run(applied, [50, 80]);
    expect(shown(applied.name)?.progress, 'no progress written on its own: 7 spent, 7 + 1 + 3 > 10').to.equal(0);
    await finish(applied);
    await expectRequests([first], tenWithProgress(50));
    await expectRequests([applied], (each) => ({
      created: 'kubectl',
      statuses: ['RUNNING 0', 'SUCCEEDED 100'],
      events: [
        { reason: 'Accepted', message: `Vigil started NMAP scan ${each.id} for account test-account` },
        { reason: 'Running', message: running(each) },
        { reason: 'Succeeded' },
      ],
    }));
  });
});
