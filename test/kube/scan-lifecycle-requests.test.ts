/**
 * What a Scan costs the API server over its whole life (issue 13: at most 10
 * requests, Events included, whatever its duration): the whole service in the
 * kubernetes runtime against the fake API server, scans created through the
 * API, their pods running with a line of progress, results uploaded, Jobs
 * Complete. Every request that names a scan is counted against it; what is
 * paid once per process (the informers' lists and watches, the scanner
 * ServiceAccount per namespace) is not a scan's.
 */
import { expect } from 'chai';
import { scanJobName, uploadTokenSecretName } from '../../src/runtime/kubernetes/job-manifest.js';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-test-account';
const NMAP_REPORT = '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/><ports></ports></host></nmaprun>';

/** "POST secrets", "PATCH scans/status": the verb and the resource. */
function kindOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const rest = parts.slice(parts.indexOf('namespaces') + 2);
  return `${request.method} ${rest[0]}${rest[2] === undefined ? '' : `/${rest[2]}`}`;
}

describe('Kubernetes runtime: API requests per Scan over its whole life', function () {
  this.timeout(120_000);

  it('costs 10 requests a scan, Events included: 3 status writes, 2 Events, and one each to create the CR, Secret and Job, follow the log and delete the Secret', async () => {
    const server = new FakeKubeApiServer();
    await server.start();
    const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8', LOG_LEVEL: 'error' }, kubeConfig: kubeConfig(server) });
    try {
      const names: string[] = [];
      for (const target of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) {
        const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: [target] })).body.data as { id: string; name: string };
        const name = `scan-${scan.id}`;
        names.push(name);
        const cr = () => server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: NS, name });
        const shown = () => cr()?.status as { state?: string; progress?: number } | undefined;
        await waitFor(async () => shown(), (status) => status?.state === 'RUNNING', 'RUNNING on the CR');

        const job = server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: NS, name: scanJobName(name) })!;
        const labels = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
        const pod = `${job.metadata.name}-pod`;
        server.setPodLog(NS, pod, 'Connect Scan Timing: About 50.00% done; ETC: 10:42\n', 'scanner');
        server.setObject({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: pod, namespace: NS, labels },
          status: { phase: 'Pending', initContainerStatuses: [{ name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] },
        } as KubeObject);
        await waitFor(async () => shown(), (status) => status?.progress === 50, '50 % on the CR');

        const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: uploadTokenSecretName(name) }) as unknown as { stringData: { token: string } };
        await service.vigil.uploads.accept(scan.id, secret.stringData.token, 'nmap.xml', [Buffer.from(NMAP_REPORT)]);
        server.setObject({ ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
        await waitFor(async () => shown(), (status) => status?.state === 'SUCCEEDED', 'SUCCEEDED on the CR');
        await waitFor(async () => server.listObjects('v1', 'Secret', NS).length, (count) => count === 0, 'the Secrets deleted');
      }
      const eventsOf = (name: string) => server.requests.filter((request) => request.path.endsWith('/events') && (request.body as { involvedObject?: { name?: string } }).involvedObject?.name === name);
      await waitFor(async () => names.map((name) => eventsOf(name).length), (counts) => counts.every((count) => count >= 2), 'the Events');

      for (const name of names) {
        const requests = server.requests.filter((request) => !request.watch && (request.path.includes(name) || JSON.stringify(request.body ?? '').includes(name) || Object.values(request.query).some((value) => value.includes(name.slice('scan-'.length)))));
        // A scan's status is written once per state its CR shows; QUEUED only when the status pass ran before the start had moved it on.
        const statuses = requests
          .filter((request) => kindOf(request) === 'PATCH scans/status')
          .map((request) => (request.body as { status: { state: string; progress: number } }).status)
          .map((status) => `${status.state} ${status.progress}`);
        expect(statuses.filter((status) => status !== 'QUEUED 0'), name).to.deep.equal(['RUNNING 0', 'RUNNING 50', 'SUCCEEDED 100']);
        expect(statuses.length, 'QUEUED written at most once, first').to.be.at.most(4);
        if (statuses.length === 4) expect(statuses[0]).to.equal('QUEUED 0');

        const byKind: Record<string, number> = {};
        for (const request of requests) byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
        byKind['PATCH scans/status'] = statuses.filter((status) => status !== 'QUEUED 0').length;
        expect(byKind, name).to.deep.equal({
          'POST scans': 1,
          'POST secrets': 1,
          'POST jobs': 1,
          'GET pods/log': 1,
          'PATCH scans/status': 3,
          'POST events': 2,
          'DELETE secrets': 1,
        });
        expect(Object.values(byKind).reduce((sum, count) => sum + count, 0)).to.equal(10);
        const reasons = eventsOf(name).map((request) => request.body as { reason: string; message: string });
        expect(reasons.map((event) => event.reason)).to.deep.equal(['Running', 'Succeeded']);
        expect(reasons[0]!.message, 'the Running Event names the Job it created').to.equal(`created Job ${scanJobName(name)}: the NMAP scanner started on 1 target(s)`);
      }
    } finally {
      await service.stop();
      await server.stop();
    }
  });
});
