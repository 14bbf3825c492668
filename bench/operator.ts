/**
 * Benchmark: the Kubernetes half (issue 13). Vigil runs in this process in
 * the kubernetes runtime against the fake API server the tests use, which
 * runs in a child process of its own (bench/support/kube-apiserver-child.ts,
 * driven over IPC), and BENCH_SCANS Scans go through their whole life: Job
 * created, pod running with a followed log line of progress, results
 * uploaded, Job Complete, Scan SUCCEEDED, Secrets deleted. Prints, and
 * asserts nothing:
 *
 * - API requests per scan over its whole life, by kind, with and without
 *   Events (watches are counted apart: they are per informer, not per scan);
 * - requests while every scan runs and nothing changes (aim: none);
 * - the time from a Job's change (Complete) to the Scan's state in the store
 *   and on its CR (p50/p99/max; the CR's is sampled in the server's process
 *   every 5 ms);
 * - the controller's memory (heap and RSS of this process, which holds Vigil,
 *   SQLite and the benchmark's own few maps) once every scan ran, beside the
 *   same figures after Vigil's modules were loaded and before it was composed,
 *   and the fake API server's apart. Run with `node --expose-gc`
 *   (NODE_OPTIONS) for figures after a full collection.
 *
 * Figures (BENCH_SCANS=1000 NODE_OPTIONS=--expose-gc, a 2-CPU VM shared with
 * other work):
 * - before: 11.02 requests per scan (8.02 without Events): status writes
 *   3.01, Events 3.00 (JobCreated, Running, Succeeded), one each to create
 *   the CR, the Secret and the Job, follow the log and delete the Secrets.
 *   Memory, Vigil and the fake API server in one process: heap 155 MiB, RSS
 *   470 MiB.
 * - after: 10.01 (8.01 without Events; earlier runs 10.02): JobCreated folded into Running (the
 *   start creates the Job and makes the scan RUNNING in one step; the
 *   Running Event names the Job), Events 2.00. The .02 left is 5 requests
 *   per process (four lists, the scanner ServiceAccount) and a few QUEUED
 *   status writes of scans that waited their turn to start (status writes
 *   3.00 in the last run). With a few scans
 *   at a time, a scan also cost a QUEUED status write while its Job was
 *   being created, a second POST of its CR (answered 409, then a GET: the
 *   reconciler and the runner raced the informer) and a status written again
 *   when the cache was behind Vigil's own write; all three are gone
 *   (test/kube/scan-lifecycle-requests.test.ts pins 10 per scan).
 *   Memory, the fake API server apart: the controller's process heap 118 MiB,
 *   RSS 329 MiB (peak 374 MiB), of which Vigil's modules loaded under tsx
 *   are heap 100 MiB, RSS 331 MiB before any scan (compiled, importing
 *   dist/src/main/composition-root.js alone takes 78 MiB heap, 211 MiB RSS):
 *   1,000 scans add about 18 MiB of heap and at most about 45 MiB of RSS at
 *   the peak. The fake API server: heap 38 MiB, RSS 171 MiB.
 *   Job Complete -> CR status SUCCEEDED p50 87 ms, p99 426 ms (store: p50
 *   50 ms, p99 219 ms) with the machine busy (Jobs created in 20 s, 9.5 s
 *   in the run before); the in-process server measured p99 56-63 ms.
 *
 * Environment:
 *   BENCH_SCANS     scans (default 1000)
 *   BENCH_RATE      Job completions per second (default 100)
 *   BENCH_TIMEOUT   seconds a phase may take before the benchmark gives up (default 300)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime } from './support/processes.js';
import type { KubeObject, ObjectRef } from '../test/support/fake-kube-apiserver.js';
import type { KubeApiServerChild } from './support/kube-apiserver-child.js';
import { kubeConfig } from '../test/support/kubeconfig.js';
import { envInteger } from './support/env.js';
import { peakRssMb as ownPeakRssMb } from '../test/support/peak-rss.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The compiled build when it is up to date (make bench builds first), as the
// webhooks benchmark does: Vigil's modules run through tsx carry tsx's
// transforms and helpers, which would be counted as the controller's memory.
const dist = join(ROOT, 'dist/src/main/composition-root.js');
const compiled = existsSync(dist) && statSync(dist).mtimeMs >= newestMtime(join(ROOT, 'src'));
const load = <T>(path: string): Promise<T> => import(join(ROOT, compiled ? `dist/src/${path}.js` : `src/${path}.ts`)) as Promise<T>;
const { loadSettings } = await load<typeof import('../src/config/settings.js')>('config/settings');
const { composeVigil } = await load<typeof import('../src/main/composition-root.js')>('main/composition-root');
const { createLogger } = await load<typeof import('../src/observability/logger.js')>('observability/logger');
const { scanJobName, uploadTokenSecretName } = await load<typeof import('../src/runtime/kubernetes/job-manifest.js')>('runtime/kubernetes/job-manifest');

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

async function until(what: string, done: () => boolean | Promise<boolean>, stepMs = 20): Promise<void> {
  const giveUpAt = Date.now() + config.timeoutSeconds * 1000;
  while (!(await done())) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** The fake API server in its child process (bench/support/kube-apiserver-child.ts), called over IPC. */
class RemoteApiServer {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: { id?: number; result?: unknown; error?: string }) => {
      const call = message.id === undefined ? undefined : this.waiting.get(message.id);
      if (call === undefined) return;
      this.waiting.delete(message.id!);
      if (message.error !== undefined) call.reject(new Error(`fake API server: ${message.error}`));
      else call.resolve(message.result);
    });
  }

  static async start(): Promise<RemoteApiServer> {
    // fork passes this process's execArgv (tsx's loader) and NODE_OPTIONS (--expose-gc) on.
    const child = fork(new URL('./support/kube-apiserver-child.ts', import.meta.url).pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the fake API server exited with ${code}`)));
    });
    child.removeAllListeners('exit');
    return new RemoteApiServer(child);
  }

  call<M extends keyof KubeApiServerChild>(method: M, ...args: Parameters<KubeApiServerChild[M]>): Promise<Awaited<ReturnType<KubeApiServerChild[M]>>> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, method, args });
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.call('stop').catch(() => undefined);
    this.child.disconnect();
    await exited;
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const server = await RemoteApiServer.start();
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
  globalThis.gc?.();
  const baseline = process.memoryUsage();
  const vigil = composeVigil(settings, createLogger(settings.logLevel, quiet), { defaultMetrics: false, kubeConfig: kubeConfig(await server.call('info')) });
  const { account } = vigil.accounts.createAccount({ name: 'bench' });
  const namespace = account.namespace;
  const http = await vigil.listen();
  const get = (ref: Omit<ObjectRef, 'namespace'>) => server.call('getObject', { ...ref, namespace });
  try {
    log(`operator benchmark (${compiled ? 'compiled dist/' : 'src/ through tsx'}): ${config.scans} NMAP scans through their life on the fake API server (its own process), ${config.rate} Job completions/s`);
    const started = Date.now();
    const scans = Array.from({ length: config.scans }, (_, index) => vigil.scans.start(account, { type: 'NMAP', targets: [`127.0.${Math.floor(index / 250)}.${(index % 250) + 1}`] })[0]!);
    await until('every Job', async () => (await server.call('count', 'batch/v1', 'Job', namespace)) === config.scans);
    log(`  ${config.scans} Jobs created in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    await server.call('runPods', namespace, 'Connect Scan Timing: About 50.00% done; ETC: 10:42\n');
    await until('progress on every scan', () => scans.every((scan) => vigil.scans.get(account, scan.id).progress >= 50), 50);
    await until('every CR to show 50 %', async () => (await server.call('scansAtProgress', namespace, 50)) === config.scans, 50);

    const before = await server.call('requestCount');
    await sleep(10_000);
    const idle = await server.call('requestTally', before);
    log(`  requests while ${config.scans} scans run and nothing changes, over 10 s: ${idle.total}${idle.total === 0 ? '' : ` (${Object.entries(idle.byKind).map(([kind, count]) => `${kind} ${count}`).join(', ')})`}`);

    // composeVigil returns the core with it; the Vigil type does not name it. One query a tick instead of a read per scan.
    const repository = (vigil as unknown as { scanRepository: { idsInStates(states: readonly string[]): string[] } }).scanRepository;
    const changedAt = new Map<string, number>();
    const storeLatency: number[] = [];
    const pendingStore = new Set(scans.map((scan) => scan.id));
    // The server's process notes when each CR first shows SUCCEEDED (every 5 ms); the clock is the machine's in both.
    await server.call('track', namespace, 'SUCCEEDED');
    const watcher = (async () => {
      while (pendingStore.size > 0) {
        const running = new Set(repository.idsInStates(['RUNNING']));
        const now = Date.now();
        for (const id of pendingStore) {
          const at = changedAt.get(id);
          if (at !== undefined && !running.has(id)) {
            storeLatency.push(now - at);
            pendingStore.delete(id);
          }
        }
        await sleep(5);
      }
    })();
    const completing = Date.now();
    for (const [index, scan] of scans.entries()) {
      const secret = (await get({ apiVersion: 'v1', kind: 'Secret', name: uploadTokenSecretName(scan.name) })) as unknown as { stringData: { token: string } };
      await vigil.uploads.accept(scan.id, secret.stringData.token, 'nmap.xml', [Buffer.from(NMAP_REPORT)]);
      const job = (await get({ apiVersion: 'batch/v1', kind: 'Job', name: scanJobName(scan.name) }))!;
      changedAt.set(scan.id, Date.now());
      await server.call('setObject', { ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as KubeObject);
      const due = completing + ((index + 1) * 1000) / config.rate;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    await until('every scan SUCCEEDED in the store', () => pendingStore.size === 0);
    await watcher;
    await until('every CR to show SUCCEEDED', async () => Object.keys(await server.call('seen')).length === config.scans, 50);
    const seen = await server.call('seen');
    await server.call('stopTracking');
    const crLatency = scans.map((scan) => seen[scan.name]! - changedAt.get(scan.id)!);
    await until('the Secrets deleted', async () => (await server.call('count', 'v1', 'Secret', namespace)) === 0, 50);
    await sleep(1000); // the last Events
    const failed = scans.filter((scan) => vigil.scans.get(account, scan.id).state !== 'SUCCEEDED');
    if (failed.length > 0) throw new Error(`${failed.length} scans did not succeed`);

    const tally = await server.call('requestTally', 0);
    const perScan = (count: number) => (count / config.scans).toFixed(2);
    log(`  API requests per scan over its whole life: ${perScan(tally.total)} (${perScan(tally.total - tally.events)} without Events; ${tally.total} requests for ${config.scans} scans); plus ${tally.watches} watch requests in all`);
    for (const [kind, count] of Object.entries(tally.byKind).sort((a, b) => b[1] - a[1])) log(`    ${kind.padEnd(32)} ${perScan(count)} per scan`);
    log(`  Job Complete -> Scan SUCCEEDED in the store: ${spread(storeLatency)}`);
    log(`  Job Complete -> Scan CR status SUCCEEDED:    ${spread(crLatency)} (sampled every 5 ms)`);
    globalThis.gc?.();
    const memory = process.memoryUsage();
    const peakRss = ownPeakRssMb() * 1024 * 1024;
    log(`  the controller's process (Vigil, SQLite, the benchmark's own bookkeeping) after ${config.scans} scans: heap used ${mib(memory.heapUsed)}, RSS ${mib(memory.rss)} (peak ${mib(peakRss)}); before Vigil was composed: heap ${mib(baseline.heapUsed)}, RSS ${mib(baseline.rss)}${globalThis.gc === undefined ? ' (run with NODE_OPTIONS=--expose-gc for figures after a full collection)' : ''}`);
    const apiServer = await server.call('memory');
    log(`  the fake API server's process, apart: heap used ${mib(apiServer.heapUsed)}, RSS ${mib(apiServer.rss)}`);
  } finally {
    await vigil.close();
    http.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
