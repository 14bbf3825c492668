/**
 * Benchmark: the Kubernetes half (issue 13). Vigil runs in this process in
 * the kubernetes runtime against the in-process fake API server (the one the
 * tests use), and BENCH_SCANS Scans go through their whole life: Job created,
 * pod running with a followed log line of progress, results uploaded, Job
 * Complete, Scan SUCCEEDED, Secrets deleted. Prints, and asserts nothing:
 *
 * - API requests per scan over its whole life, by kind, with and without
 *   Events (watches are counted apart: they are per informer, not per scan);
 * - requests while every scan runs and nothing changes (aim: none);
 * - the time from a Job's change (Complete) to the Scan's state in the store
 *   and on its CR (p50/p99/max);
 * - the process's memory (heap and RSS) once every scan ran. The fake API
 *   server lives in the same process and holds every object (its watch
 *   history is dropped first), so the figure is an upper bound for the
 *   controller's. Run with `node --expose-gc` (NODE_OPTIONS) for a figure
 *   after a full collection.
 *
 * Figures (BENCH_SCANS=1000 NODE_OPTIONS=--expose-gc, a 2-CPU VM shared with
 * other work):
 * - before: 11.02 requests per scan (8.02 without Events): status writes
 *   3.01, Events 3.00 (JobCreated, Running, Succeeded), one each to create
 *   the CR, the Secret and the Job, follow the log and delete the Secrets;
 * - after: 10.02 (8.02 without Events): JobCreated folded into Running (the
 *   start creates the Job and makes the scan RUNNING in one step; the
 *   Running Event names the Job), Events 2.00. The .02 left is 5 requests
 *   per process (four lists, the scanner ServiceAccount) and a handful of
 *   QUEUED status writes (a status pass that ran before the start moved the
 *   row on). With a few scans at a time the CR was also created twice (the
 *   reconciler and the runner raced the informer: a POST answered 409 and a
 *   GET) and a status written again when the cache was behind Vigil's own
 *   writes; both are gone (test/kube/scan-lifecycle-requests.test.ts pins 10
 *   per scan).
 *
 * Environment:
 *   BENCH_SCANS     scans (default 1000)
 *   BENCH_RATE      Job completions per second (default 100)
 *   BENCH_TIMEOUT   seconds a phase may take before the benchmark gives up (default 300)
 */
import { Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../src/config/settings.js';
import { composeVigil } from '../src/main/composition-root.js';
import { createLogger } from '../src/observability/logger.js';
import { scanJobName, uploadTokenSecretName } from '../src/runtime/kubernetes/job-manifest.js';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../test/support/fake-kube-apiserver.js';
import { kubeConfig } from '../test/support/kubeconfig.js';
import { envInteger } from './support/env.js';

const config = {
  scans: envInteger('BENCH_SCANS', 1000, 1),
  rate: envInteger('BENCH_RATE', 100, 1),
  timeoutSeconds: envInteger('BENCH_TIMEOUT', 300, 1),
};
if (config.scans > 64_000) throw new Error('BENCH_SCANS must be at most 64000 (one loopback target per scan)');

const log = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const NMAP_REPORT = '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/><ports></ports></host></nmaprun>';

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN;
}
const spread = (values: readonly number[]) => `p50 ${percentile(values, 0.5).toFixed(0)} ms, p99 ${percentile(values, 0.99).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms`;

async function until(what: string, done: () => boolean, stepMs = 20): Promise<void> {
  const giveUpAt = Date.now() + config.timeoutSeconds * 1000;
  while (!done()) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** "POST secrets" and the like: the verb and the resource, what a request per scan costs. */
function kindOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const namespaced = parts.indexOf('namespaces');
  const rest = namespaced >= 0 ? parts.slice(namespaced + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const resource = rest[0] ?? '?';
  const sub = rest[2] === undefined ? '' : `/${rest[2]}`;
  return `${request.method} ${resource}${sub}`;
}

function runningPod(job: KubeObject): KubeObject {
  const labels = ((job.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${job.metadata.name}-pod`, namespace: job.metadata.namespace, labels },
    status: { phase: 'Pending', initContainerStatuses: [{ name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] },
  };
}

async function main(): Promise<void> {
  const server = new FakeKubeApiServer();
  await server.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'vigil-bench-operator-'));
  const settings = loadSettings({
    VIGIL_RUNTIME: 'kubernetes',
    VIGIL_DATA_DIR: dataDir,
    VIGIL_PORT: '0',
    VIGIL_ALLOW_TARGETS: '127.0.0.0/8',
    VIGIL_MAX_CONCURRENT_SCANS: String(config.scans),
    LOG_LEVEL: 'error',
  });
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const vigil = composeVigil(settings, createLogger(settings.logLevel, quiet), { defaultMetrics: false, kubeConfig: kubeConfig(server) });
  const { account } = vigil.accounts.createAccount({ name: 'bench' });
  const namespace = account.namespace;
  const http = await vigil.listen();
  try {
    log(`operator benchmark: ${config.scans} NMAP scans through their life on the fake API server, ${config.rate} Job completions/s`);
    const started = Date.now();
    const scans = Array.from({ length: config.scans }, (_, index) => vigil.scans.start(account, { type: 'NMAP', targets: [`127.0.${Math.floor(index / 250)}.${(index % 250) + 1}`] })[0]!);
    await until('every Job', () => server.listObjects('batch/v1', 'Job', namespace).length === config.scans);
    log(`  ${config.scans} Jobs created in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    for (const job of server.listObjects('batch/v1', 'Job', namespace)) server.setObject(runningPod(job));
    for (const job of server.listObjects('batch/v1', 'Job', namespace)) server.setPodLog(namespace, `${job.metadata.name}-pod`, 'Connect Scan Timing: About 50.00% done; ETC: 10:42\n', 'scanner');
    await until('progress on every scan', () => scans.every((scan) => vigil.scans.get(account, scan.id).progress >= 50), 50);
    await until('every CR to show 50 %', () => server.listObjects('vigil.dev/v1alpha1', 'Scan', namespace).every((cr) => (cr.status as { progress?: number } | undefined)?.progress === 50), 50);

    const before = server.requests.filter((request) => !request.watch).length;
    await sleep(10_000);
    const idleRequests = server.requests.filter((request) => !request.watch).slice(before);
    const idleKinds = new Map<string, number>();
    for (const request of idleRequests) idleKinds.set(kindOf(request), (idleKinds.get(kindOf(request)) ?? 0) + 1);
    log(`  requests while ${config.scans} scans run and nothing changes, over 10 s: ${idleRequests.length}${idleRequests.length === 0 ? '' : ` (${[...idleKinds].map(([kind, count]) => `${kind} ${count}`).join(', ')})`}`);

    // composeVigil returns the core with it; the Vigil type does not name it. One query a tick instead of a read per scan.
    const repository = (vigil as unknown as { scanRepository: { idsInStates(states: readonly string[]): string[] } }).scanRepository;
    const changedAt = new Map<string, number>();
    const storeLatency: number[] = [];
    const crLatency: number[] = [];
    const pendingStore = new Set(scans.map((scan) => scan.id));
    const pendingCr = new Map(scans.map((scan) => [scan.name, scan.id]));
    const watcher = (async () => {
      while (pendingStore.size > 0 || pendingCr.size > 0) {
        const running = new Set(repository.idsInStates(['RUNNING']));
        const now = Date.now();
        for (const id of pendingStore) {
          const at = changedAt.get(id);
          if (at !== undefined && !running.has(id)) {
            storeLatency.push(now - at);
            pendingStore.delete(id);
          }
        }
        for (const [name, id] of pendingCr) {
          const at = changedAt.get(id);
          if (at === undefined) continue;
          const cr = server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace, name });
          if ((cr?.status as { state?: string } | undefined)?.state === 'SUCCEEDED') {
            crLatency.push(now - at);
            pendingCr.delete(name);
          }
        }
        await sleep(5);
      }
    })();
    const completing = Date.now();
    for (const [index, scan] of scans.entries()) {
      const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name: uploadTokenSecretName(scan.name) }) as unknown as { stringData: { token: string } };
      await vigil.uploads.accept(scan.id, secret.stringData.token, 'nmap.xml', [Buffer.from(NMAP_REPORT)]);
      const job = server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: scanJobName(scan.name) })!;
      changedAt.set(scan.id, Date.now());
      server.setObject({ ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
      const due = completing + ((index + 1) * 1000) / config.rate;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    await until('every scan SUCCEEDED, in the store and on its CR', () => pendingStore.size === 0 && pendingCr.size === 0);
    await watcher;
    await until('the Secrets deleted', () => server.listObjects('v1', 'Secret', namespace).length === 0, 50);
    await sleep(1000); // the last Events
    const failed = scans.filter((scan) => vigil.scans.get(account, scan.id).state !== 'SUCCEEDED');
    if (failed.length > 0) throw new Error(`${failed.length} scans did not succeed`);

    const requests = server.requests.filter((request) => !request.watch);
    const watches = server.requests.filter((request) => request.watch).length;
    const events = requests.filter((request) => request.path.includes('/events'));
    const byKind = new Map<string, number>();
    for (const request of requests) byKind.set(kindOf(request), (byKind.get(kindOf(request)) ?? 0) + 1);
    const perScan = (count: number) => (count / config.scans).toFixed(2);
    log(`  API requests per scan over its whole life: ${perScan(requests.length)} (${perScan(requests.length - events.length)} without Events); plus ${watches} watch requests in all`);
    for (const [kind, count] of [...byKind.entries()].sort((a, b) => b[1] - a[1])) log(`    ${kind.padEnd(32)} ${perScan(count)} per scan`);
    log(`  Job Complete -> Scan SUCCEEDED in the store: ${spread(storeLatency)}`);
    log(`  Job Complete -> Scan CR status SUCCEEDED:    ${spread(crLatency)}`);
    // The fake server's watch history holds every version of every object; drop it so the figure is mostly Vigil's.
    server.compactHistory();
    globalThis.gc?.();
    const memory = process.memoryUsage();
    log(`  memory after ${config.scans} scans (Vigil and the fake API server in one process): heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB, RSS ${(memory.rss / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await vigil.close();
    http.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
