/**
 * Benchmark: the ScheduledScan reconciler (issue 13). Vigil runs in this
 * process in the kubernetes runtime against the in-process fake API server
 * (the one the tests use). Prints, and asserts nothing:
 *
 * - writes to ScheduledScan objects per schedule created through the API,
 *   per update through the API, and per schedule applied with kubectl;
 * - the time from a kubectl edit (a new generation of the spec) to the
 *   schedule's row and to the CR's observedGeneration (p50/p99/max);
 * - writes after every watch broke (a full pass), and after a restart on the
 *   same data (a full pass with no memory): aim none.
 *
 * Environment:
 *   BENCH_SCHEDULES  schedules of each origin (default 200)
 *   BENCH_TIMEOUT    seconds a phase may take before the benchmark gives up (default 300)
 */
import type { Account } from '../src/domain/accounts/account.js';
import { FakeKubeApiServer, type KubeObject } from '../test/support/fake-kube-apiserver.js';
import { kubeConfig } from '../test/support/kubeconfig.js';
import { tempDir } from '../test/support/temp-dir.js';
import { TestService } from '../test/support/test-service.js';
import { envInteger } from './support/env.js';

const config = { schedules: envInteger('BENCH_SCHEDULES', 200, 1), timeoutSeconds: envInteger('BENCH_TIMEOUT', 300, 1) };
const NS = 'vigil-test-account';
const API_VERSION = 'vigil.dev/v1alpha1';
const log = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN;
}
const spread = (values: readonly number[]) =>
  `p50 ${percentile(values, 0.5).toFixed(0)} ms, p99 ${percentile(values, 0.99).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms`;

async function until(what: string, done: () => boolean, stepMs = 10): Promise<void> {
  const giveUpAt = Date.now() + config.timeoutSeconds * 1000;
  while (!done()) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await sleep(stepMs);
  }
}

type Cr = KubeObject & { spec: Record<string, unknown>; status?: { scheduledScanId?: string; observedGeneration?: number } };

async function main(): Promise<void> {
  const server = new FakeKubeApiServer();
  await server.start();
  const dir = tempDir();
  // No API rate limit: the benchmark sends its requests one after the other, as fast as they are answered.
  const options = {
    env: { VIGIL_RUNTIME: 'kubernetes', LOG_LEVEL: 'warn', VIGIL_RATE_LIMIT_PER_SECOND: '100000', VIGIL_RATE_LIMIT_BURST: '100000' },
    kubeConfig: kubeConfig(server),
    dataDir: dir.path,
  };
  const writes = () => server.requests.filter((request) => request.path.includes('/scheduledscans') && !request.watch && request.method !== 'GET').length;
  const crs = () => server.listObjects(API_VERSION, 'ScheduledScan', NS) as Cr[];
  const quiet = async () => {
    let before = -1;
    while (before !== writes()) {
      before = writes();
      await sleep(1_500);
    }
    return before;
  };
  const n = config.schedules;
  log(`ScheduledScan reconciler, ${n} schedules of each origin, fake API server`);
  let service = await TestService.start(options);
  try {
    const body = {
      schedule: 'DAILY',
      scan_types: ['NMAP'],
      filter_set: { tags: ['prod'] },
      email_notification: 'NEVER',
      start_time: '2099-01-01T06:00:00.000Z',
    };
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await service.post('/v1/scans/scheduled', body)).body.data.id);
    await until('every CR with its status', () => crs().filter((cr) => cr.status?.scheduledScanId !== undefined).length === n);
    let count = await quiet();
    log(`created through the API: ${(count / n).toFixed(2)} writes per schedule`);

    server.clearRequests();
    for (const id of ids) {
      const response = await service.put(`/v1/scans/scheduled/${id}`, { ...body, schedule: 'WEEKLY' });
      if (response.status !== 200) throw new Error(`PUT ${id}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    await until('every spec replaced and observed', () => crs().filter((cr) => cr.status?.observedGeneration === 2).length === n);
    count = await quiet();
    log(`updated through the API: ${(count / n).toFixed(2)} writes per update`);

    server.clearRequests();
    const spec = { schedule: 'DAILY', scanTypes: ['NMAP'], filterSet: { tags: ['prod'] }, emailNotification: 'NEVER', startTime: '2099-01-01T06:00:00Z' };
    for (let i = 0; i < n; i++)
      server.setObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', metadata: { name: `applied-${i}`, namespace: NS }, spec } as never);
    await until(
      'every applied CR adopted',
      () => crs().filter((cr) => cr.metadata.name!.startsWith('applied-') && cr.status?.scheduledScanId !== undefined).length === n,
    );
    count = await quiet();
    log(`applied with kubectl: ${(count / n).toFixed(2)} writes per schedule`);

    const account = { id: service.accountId } as Account; // the service reads only the id, to scope the row
    // kubectl edit of every applied CR, one at a time: the time until the row and the CR's status follow.
    const toRow: number[] = [];
    const toStatus: number[] = [];
    for (let i = 0; i < n; i++) {
      const current = server.getObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', namespace: NS, name: `applied-${i}` }) as Cr;
      const id = current.status!.scheduledScanId!;
      const started = performance.now();
      const { generation: _generation, ...metadata } = current.metadata; // the API server counts the generation, as for kubectl edit
      server.setObject({ ...current, metadata, spec: { ...spec, schedule: 'WEEKLY' } } as never);
      await until('the row to follow', () => service.vigil.scheduledScans.get(account, id).schedule === 'WEEKLY', 1);
      toRow.push(performance.now() - started);
      await until(
        'the status to follow',
        () =>
          (server.getObject({ apiVersion: API_VERSION, kind: 'ScheduledScan', namespace: NS, name: `applied-${i}` }) as Cr).status?.observedGeneration === 2,
        1,
      );
      toStatus.push(performance.now() - started);
    }
    log(`kubectl edit to the row: ${spread(toRow)}`);
    log(`kubectl edit to the CR status: ${spread(toStatus)}`);
    await quiet();

    server.clearRequests();
    server.breakWatches();
    log(`after every watch broke (a full pass over ${2 * n} CRs): ${await quiet()} writes`);
  } finally {
    await service.stop();
  }
  server.clearRequests();
  const started = performance.now();
  service = await TestService.start({ ...options, accountName: 'second' });
  try {
    log(`after a restart (a full pass with no memory, ${(performance.now() - started).toFixed(0)} ms to start): ${await quiet()} writes`);
  } finally {
    await service.stop();
    await server.stop();
    dir.remove();
  }
}

await main();
