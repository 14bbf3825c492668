/**
 * Benchmark (issue 29): one account with a million risks. Seeds the account
 * as the issue did (bench/support/scale-seed.ts: 25 nmap uploads of 40,020
 * findings on 10,000 targets, 500 HIGH and the rest INFO, through the
 * imports service; cached under the OS temp dir by size, so reruns copy it),
 * starts the service in a child process (bench/support/scale-server.ts,
 * which measures the longest event-loop block per request kind with
 * monitorEventLoopDelay), then measures, one request at a time, every list
 * and filter of risks, scans and targets and the dashboard overview; a
 * report of every risk in PDF, HTML and CSV (time to done: POST /v1/reports
 * answers once it is rendered); /healthz every 50 ms while ten clients run
 * the slowest queries and a report renders; uploading a re-scan of 40,020
 * findings, then again with a webhook endpoint registered (so that its
 * 40,020 risk events are stored too); deleting a scan and a target; the server's peak RSS in each
 * phase and the database's size. Prints a table with each
 * aim beside it. Asserts nothing; a request that does not answer 2xx fails
 * the run.
 *
 *   npx tsx bench/scale.ts
 *   BENCH_SCALE_RISKS=100000 npx tsx bench/scale.ts    (3 uploads, a quick run)
 *
 * Environment:
 *   BENCH_SCALE_RISKS          risks to seed, in uploads of 40,020 (default 1,000,500: 25 uploads)
 *   BENCH_SCALE_REQUESTS       measured requests per list, after 2 warm-ups (default 20)
 *   BENCH_SCALE_LOAD_SECONDS   the ten clients' run (default 20; longer when the report takes longer)
 *   BENCH_VIGIL_NODE_OPTIONS   NODE_OPTIONS of the service's process (default: the image's, from the Dockerfile; empty for none)
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DashboardClient } from '../test/support/dashboard-client.js';
import { runtimeEnv } from '../test/support/dockerfile.js';
import { envInteger } from './support/env.js';
import { percentile, runLoad } from './support/load.js';
import { cleanup, freePort, runBenchmark, startChild, tempDirectory, waitForHttp } from './support/processes.js';
import { FINDINGS_PER_UPLOAD, nmapXml, seededCopy, type ScaleSeed } from './support/scale-seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AIMS = { listP99Ms: 100, healthP99Ms: 250, blockMs: 50, rssMb: 400 };
const WARMUP = 2;
const config = {
  uploads: Math.max(1, Math.round(envInteger('BENCH_SCALE_RISKS', 25 * FINDINGS_PER_UPLOAD, 1) / FINDINGS_PER_UPLOAD)),
  requests: envInteger('BENCH_SCALE_REQUESTS', 20, 1),
  loadSeconds: envInteger('BENCH_SCALE_LOAD_SECONDS', 20, 1),
};
const log = (line = '') => process.stdout.write(`${line}\n`);

interface Row {
  name: string;
  p50Ms?: number;
  p99Ms?: number;
  blockMs?: number;
  aim: string;
  met?: boolean;
}

class Service {
  constructor(
    readonly base: string,
    private readonly apiKey: string,
    private readonly cookie: string,
  ) {}

  /** One request; its time in ms. Fails the run unless it answers 2xx. */
  async timed(path: string, init: RequestInit = {}): Promise<{ ms: number; body: any }> {
    const headers = { ...(path.startsWith('/dashboard') ? { Cookie: this.cookie } : { 'X-SERVICE-API-KEY': this.apiKey }), ...(init.headers ?? {}) };
    const started = performance.now();
    const response = await fetch(`${this.base}${path}`, { ...init, headers });
    const text = await response.text();
    const ms = performance.now() - started;
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return { ms, body: text.startsWith('{') ? JSON.parse(text) : text };
  }

  /**
   * The server's event loop since the last look: its longest block in ms, and its main thread's time on a CPU and waiting
   * for one (null without /proc schedstat). A block over the aim is logged with what was served meanwhile, the longest
   * garbage collection pause, how much of the block was collection and checkpoint, and how much of it the thread spent waiting for a CPU
   * (time the machine gave to other processes, not the server's work).
   */
  async look(served = 'between requests: work an earlier one left running'): Promise<Look> {
    const figures = (await (await fetch(`${this.base}/__bench/loop`)).json()) as Look & {
      gcMs: number;
      gapMs: number;
      gcInGapMs: number;
      gcKinds: string;
      checkpointInGapMs: number;
      checkpointInGapFrames: number;
      gapCpuMs: number | null;
      gapWaitMs: number | null;
    };
    const { maxMs, gcMs, gapMs, gcInGapMs, gcKinds, checkpointInGapMs, checkpointInGapFrames, gapCpuMs, gapWaitMs } = figures;
    if (maxMs > AIMS.blockMs)
      log(
        `a block of ${maxMs.toFixed(0)} ms (${served}); the longest garbage collection pause meanwhile ${gcMs.toFixed(0)} ms; ` +
          `in the longest gap a timer saw (${gapMs.toFixed(0)} ms), ${gcInGapMs.toFixed(0)} ms of collection (${gcKinds || 'none'}), ` +
          `${checkpointInGapMs.toFixed(0)} ms of WAL checkpoint (a log of ${checkpointInGapFrames} frames)` +
          (gapCpuMs === null ? '' : `, the main thread ${gapCpuMs.toFixed(0)} ms on a CPU and ${gapWaitMs!.toFixed(0)} ms waiting for one`),
      );
    return figures;
  }

  async loop(served?: string): Promise<number> {
    return (await this.look(served)).maxMs;
  }

  /** One request alone, the longest block of the event loop while it was served, and the main thread's CPU and wait meanwhile. */
  async alone(path: string, init: RequestInit = {}): Promise<{ ms: number; blockMs: number; body: any; cpuMs: number | null; waitMs: number | null }> {
    await this.loop();
    const { ms, body } = await this.timed(path, init);
    const { maxMs, cpuMs, waitMs } = await this.look(`${init.method ?? 'GET'} ${path.slice(0, 80)}`);
    return { ms, body, blockMs: maxMs, cpuMs, waitMs };
  }
}

interface Look {
  maxMs: number;
  cpuMs: number | null;
  waitMs: number | null;
}

const filters = (value: Record<string, string[]>) => `filters=${encodeURIComponent(JSON.stringify(value))}`;

async function listCases(service: Service): Promise<Array<[string, string]>> {
  const target = (await service.timed('/v1/targets?page_size=1&sort=target')).body.data[0];
  const high = (await service.timed(`/v1/risks?page_size=1&${filters({ 'risk_definition.threat_level': ['HIGH'] })}`)).body.data[0];
  return [
    ['risks', '/v1/risks'],
    ...['threat_level', 'first_detected_at', 'last_detected_at', 'target'].flatMap((field): Array<[string, string]> => [
      [`risks sort ${field} desc`, `/v1/risks?sort=${encodeURIComponent(`${field} desc`)}`],
      [`risks sort ${field} asc`, `/v1/risks?sort=${encodeURIComponent(`${field} asc`)}`],
    ]),
    ['risks status CLOSED (none)', `/v1/risks?${filters({ status: ['CLOSED'] })}`],
    ['risks status OPEN', `/v1/risks?${filters({ status: ['OPEN'] })}`],
    ['risks threat_level HIGH', `/v1/risks?${filters({ 'risk_definition.threat_level': ['HIGH'] })}`],
    ['risks threat_level HIGH,CRITICAL', `/v1/risks?${filters({ 'risk_definition.threat_level': ['HIGH', 'CRITICAL'] })}`],
    ['risks threat_level HIGH + sort target', `/v1/risks?sort=target&${filters({ 'risk_definition.threat_level': ['HIGH'] })}`],
    ['risks scan_type NMAP', `/v1/risks?${filters({ 'risk_definition.scan_type': ['NMAP'] })}`],
    ['risks scan_type OWASP_ZAP (none)', `/v1/risks?${filters({ 'risk_definition.scan_type': ['OWASP_ZAP'] })}`],
    ['risks title (a HIGH one)', `/v1/risks?${filters({ 'risk_definition.title': [high.risk_definition.title] })}`],
    ['risks target_id', `/v1/risks?${filters({ target_id: [target.id] })}`],
    ['risks tags weekly (every target)', `/v1/risks?${filters({ tags: ['weekly'] })}`],
    ['risks tags pci (1 in 10)', `/v1/risks?${filters({ tags: ['pci'] })}`],
    ['risks tags dmz (1 in 200)', `/v1/risks?${filters({ tags: ['dmz'] })}`],
    ['risks tags none (no match)', `/v1/risks?${filters({ tags: ['no-such-tag'] })}`],
    ['scans', '/v1/scans'],
    ['scans state SUCCEEDED', `/v1/scans?${filters({ state: ['SUCCEEDED'] })}`],
    ['scans state FAILED (none)', `/v1/scans?${filters({ state: ['FAILED'] })}`],
    ['scans type NMAP', `/v1/scans?${filters({ type: ['NMAP'] })}`],
    ['targets', '/v1/targets'],
    ...['label', 'target', 'created_at', 'last_scanned'].flatMap((field): Array<[string, string]> => [
      [`targets sort ${field} asc`, `/v1/targets?sort=${encodeURIComponent(`${field} asc`)}`],
      [`targets sort ${field} desc`, `/v1/targets?sort=${encodeURIComponent(`${field} desc`)}`],
    ]),
    ['dashboard overview (HTML)', '/dashboard'],
  ];
}

async function oneAtATime(service: Service, cases: ReadonlyArray<[string, string]>): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, path] of cases) {
    const times: number[] = [];
    let blockMs = 0;
    let slowest: Awaited<ReturnType<Service['alone']>> | undefined;
    // The warm-ups' times are not counted (the first request of a list reads its pages into SQLite's cache), their blocks are.
    for (let round = 0; round < WARMUP + config.requests; round++) {
      const measured = await service.alone(path);
      if (round >= WARMUP) times.push(measured.ms);
      if (round >= WARMUP && measured.ms > (slowest?.ms ?? 0)) slowest = measured;
      blockMs = Math.max(blockMs, measured.blockMs);
    }
    times.sort((a, b) => a - b);
    const p99Ms = percentile(times, 0.99);
    if (p99Ms >= AIMS.listP99Ms && slowest?.cpuMs != null)
      log(
        `\n${name}: its slowest request took ${slowest.ms.toFixed(0)} ms; the server's main thread was ${slowest.cpuMs.toFixed(0)} ms on a CPU ` +
          `and ${slowest.waitMs!.toFixed(0)} ms waiting for one meanwhile`,
      );
    rows.push({
      name,
      p50Ms: percentile(times, 0.5),
      p99Ms,
      blockMs,
      aim: `p99 < ${AIMS.listP99Ms} ms, block <= ${AIMS.blockMs} ms`,
      met: p99Ms < AIMS.listP99Ms && blockMs <= AIMS.blockMs,
    });
    process.stdout.write('.');
  }
  log();
  return rows;
}

/** A row for a request made once: its time to done (no aim) and the longest block of the loop meanwhile. */
function oneOff(name: string, ms: number, blockMs: number): Row {
  return { name, p50Ms: ms, p99Ms: ms, blockMs, aim: `done (no aim), block <= ${AIMS.blockMs} ms`, met: blockMs <= AIMS.blockMs };
}

async function reports(service: Service): Promise<Row[]> {
  const rows: Row[] = [];
  for (const format of ['PDF', 'HTML', 'CSV']) {
    const { ms, blockMs } = await service.alone('/v1/reports', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ report_format: format }),
    });
    rows.push(oneOff(`report of every risk, ${format} (the 10,000 most severe held)`, ms, blockMs));
  }
  return rows;
}

/** A connection the server dropped (its keep-alive timer fires late when its event loop is held for seconds): counted, not fatal. */
let dropped = 0;
async function unlessDropped<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    dropped++;
    return undefined;
  }
}

/** /healthz every 50 ms until `done` settles; each answer's time (a dropped connection is not an answer). */
async function sampleHealth(service: Service, done: Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const answer = await unlessDropped(service.timed('/healthz'));
    if (answer !== undefined) times.push(answer.ms);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return times.sort((a, b) => a - b);
}

/** Ten clients on the slowest lists, a report of every risk rendering (one after another), /healthz sampled meanwhile. */
async function underLoad(service: Service, apiKey: string, slowest: readonly string[]): Promise<Row> {
  await service.loop();
  const load = runLoad({ url: service.base, paths: slowest, headers: { 'X-SERVICE-API-KEY': apiKey }, connections: 10, durationSeconds: config.loadSeconds });
  let loading = true;
  void load.finally(() => (loading = false));
  const reporting = (async () => {
    let made = 0;
    do {
      await unlessDropped(
        service.timed('/v1/reports', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ report_format: 'HTML' }) }),
      );
      made++;
    } while (loading);
    return made;
  })();
  const both = Promise.all([load, reporting]);
  const health = await sampleHealth(service, both);
  const [sample, made] = await both;
  const { maxMs: max, cpuMs, waitMs } = await service.look('ten clients and reports');
  const p99Ms = percentile(health, 0.99);
  log(
    `ten clients: ${sample.requests} requests (${sample.non2xx} non-2xx, ${sample.errors} errors) in ${sample.seconds} s, ${made} HTML reports of every risk tried meanwhile; ${dropped} connections (of /healthz or a report) dropped by the server` +
      (cpuMs === null ? '' : `; the server's main thread ${(cpuMs / 1000).toFixed(1)} s on a CPU and ${(waitMs! / 1000).toFixed(1)} s waiting for one`),
  );
  return {
    name: `/healthz with ten clients on the ${slowest.length} slowest lists + reports (${health.length} samples, max ${health.at(-1)!.toFixed(0)} ms)`,
    p50Ms: percentile(health, 0.5),
    p99Ms,
    blockMs: max,
    aim: `p99 < ${AIMS.healthP99Ms} ms`,
    met: p99Ms < AIMS.healthP99Ms,
  };
}

/** One request alone with /healthz sampled meanwhile: its time, its longest block and the slowest /healthz answer. */
async function oneOffWithHealth(service: Service, name: string, path: string, init: RequestInit): Promise<Row> {
  await service.loop();
  const done = service.timed(path, init);
  done.catch(() => undefined); // awaited below, after the samples
  const health = await sampleHealth(service, done);
  const { ms } = await done;
  const blockMs = await service.loop(name);
  return oneOff(`${name}; /healthz max ${health.at(-1)!.toFixed(0)} ms meanwhile`, ms, blockMs);
}

/**
 * The second sweep uploaded again through POST /v1/results (the first's first target is a manual one now): a re-scan
 * of 400 targets whose 40,020 risks all stay open.
 */
async function reupload(service: Service, withEndpoint = false): Promise<Row> {
  if (withEndpoint) await fetch(`${service.base}/__bench/endpoint`, { method: 'POST' });
  const source = (
    await service.timed('/v1/sources', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ source_type: 'IMPORTED', name: 'bench re-scan' }),
    })
  ).body.data as { id: string };
  const form = new FormData();
  form.set('source_id', source.id);
  form.set('scan_type', 'NMAP');
  form.set('file', new Blob([...nmapXml(1)]), 'sweep.xml');
  const name = `upload a re-scan (${FINDINGS_PER_UPLOAD} findings, all still open)${withEndpoint ? ' with a webhook endpoint (every event stored)' : ''}`;
  return oneOffWithHealth(service, name, '/v1/results', { method: 'POST', body: form });
}

async function deletions(service: Service): Promise<Row[]> {
  const scans = (await service.timed('/v1/scans')).body.data as Array<{ id: string }>;
  const targets = (await service.timed(`/v1/targets?${filters({ tags: ['deletable'] })}`)).body.data as Array<{ id: string }>;
  return [
    await oneOffWithHealth(service, `delete a scan (${FINDINGS_PER_UPLOAD} risks)`, `/v1/scans/${scans.at(-1)!.id}`, { method: 'DELETE' }),
    await oneOffWithHealth(service, 'delete a target (100 risks)', `/v1/targets/${targets[0]!.id}`, { method: 'DELETE' }),
  ];
}

/** The process's peak RSS since the last call (VmHWM, reset through clear_refs), in MB. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return match === null ? Number.NaN : (Number(match[1]) * 1024) / 1e6;
}

function databaseMb(dataDir: string): number {
  return (
    ['vigil.db', 'vigil.db-wal']
      .map((name) => join(dataDir, name))
      .filter(existsSync)
      .reduce((sum, file) => sum + statSync(file).size, 0) / 1e6
  );
}

function printTable(rows: readonly Row[]): void {
  const cell = (value: number | undefined) => (value === undefined ? '' : value.toFixed(value < 10 ? 1 : 0));
  const lines = rows.map((row) => [
    row.name,
    cell(row.p50Ms),
    cell(row.p99Ms),
    cell(row.blockMs),
    row.aim,
    row.met === undefined ? '' : row.met ? 'yes' : 'NO',
  ]);
  const header = ['', 'p50 ms', 'p99 ms', 'loop block ms', 'aim', 'met'];
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  for (const line of [header, ...lines])
    log(line.map((value, column) => (column === 0 || column === 4 ? value.padEnd(widths[column]!) : value.padStart(widths[column]!))).join('  '));
}

async function main(): Promise<void> {
  const work = tempDirectory('vigil-bench-scale-');
  const dataDir = join(work, 'data');
  const seed: ScaleSeed & { cached: string; fromCache: boolean } = await seededCopy(config.uploads, dataDir, log);
  log(
    `${seed.risks} risks on ${seed.targets} targets from ${seed.uploads} uploads; ${seed.fromCache ? `copied from ${seed.cached}` : ''} seeded in ${seed.seedSeconds.toFixed(0)} s`,
  );
  const port = await freePort();
  // Node options of the service's process: the image's (its Dockerfile's NODE_OPTIONS, a young generation of two 4 MiB semi-spaces), as deployed.
  const nodeOptions = process.env.BENCH_VIGIL_NODE_OPTIONS ?? runtimeEnv().NODE_OPTIONS ?? '';
  log(`the service runs with NODE_OPTIONS=${nodeOptions === '' ? '(none)' : nodeOptions}`);
  const server = startChild(
    'scale server',
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/support/scale-server.ts'), dataDir, String(port)],
    { ...process.env, NODE_OPTIONS: nodeOptions },
    ROOT,
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(server, `${base}/healthz`, 120_000);
  const dashboard = await new DashboardClient(base).signedIn(seed.apiKey);
  const service = new Service(base, seed.apiKey, [...dashboard.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
  // The blocks of start-up (the API's validators compile in the background) are no request's: forgotten, unlogged.
  await fetch(`${base}/__bench/loop`);
  const cases = await listCases(service);
  log(`${cases.length} lists, ${config.requests} requests each, one at a time`);
  const peaks: Array<[string, number]> = [['start-up', peakRssMb(server.process.pid!)]];
  const lists = await oneAtATime(service, cases);
  peaks.push(['lists', peakRssMb(server.process.pid!)]);
  const made = await reports(service);
  peaks.push(['reports', peakRssMb(server.process.pid!)]);
  const slowest = lists
    .filter((row) => row.name !== 'dashboard overview (HTML)')
    .sort((a, b) => b.p99Ms! - a.p99Ms!)
    .slice(0, 3);
  const health = await underLoad(
    service,
    seed.apiKey,
    slowest.map((row) => cases.find(([name]) => name === row.name)![1]),
  );
  peaks.push(['ten clients', peakRssMb(server.process.pid!)]);
  const uploaded = await reupload(service);
  peaks.push(['upload', peakRssMb(server.process.pid!)]);
  const uploadedWithEvents = await reupload(service, true);
  peaks.push(['upload with events', peakRssMb(server.process.pid!)]);
  const deleted = await deletions(service);
  peaks.push(['deletions', peakRssMb(server.process.pid!)]);
  const rssMb = Math.max(...peaks.map(([, mb]) => mb));
  const alone = [...lists, ...made, uploaded, uploadedWithEvents, ...deleted];
  const worst = alone.reduce((most, row) => (row.blockMs! > most.blockMs! ? row : most));
  const rows: Row[] = [
    ...alone.slice(0, lists.length + made.length),
    health,
    uploaded,
    uploadedWithEvents,
    ...deleted,
    {
      name: `longest event-loop block of any request alone (${worst.name})`,
      blockMs: worst.blockMs,
      aim: `<= ${AIMS.blockMs} ms`,
      met: worst.blockMs! <= AIMS.blockMs,
    },
    {
      name: `server peak RSS (VmHWM, MB; by phase: ${peaks.map(([phase, mb]) => `${phase} ${mb.toFixed(0)}`).join(', ')})`,
      p99Ms: rssMb,
      aim: `< ${AIMS.rssMb} MB`,
      met: rssMb < AIMS.rssMb,
    },
    { name: `database size (MB), ${seed.risks} risks`, p99Ms: databaseMb(dataDir), aim: '' },
  ];
  log();
  printTable(rows);
}

runBenchmark(main, cleanup, 3_600);
