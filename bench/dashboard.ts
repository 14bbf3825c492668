/**
 * Benchmark: server time of every dashboard page on a large account (10,000
 * targets, 100,000 risks, 1,500 scans over twelve weeks, 30 schedules by
 * default). The service runs in this process behind a middleware that times
 * each request from arrival to the last byte handed to the socket; each page
 * is loaded a few times to warm up, then BENCH_REQUESTS times, one at a time.
 * Prints the median, p95 and maximum per page and whether every page's p95 is
 * under 200 ms (the aim). Speed is printed, never asserted; a page
 * that does not answer 200 fails the run.
 *
 * Environment:
 *   BENCH_TARGETS    targets to seed (default 10000)
 *   BENCH_RISKS      risks to seed (default 100000)
 *   BENCH_SCANS      scans to seed (default 1500)
 *   BENCH_REQUESTS   measured loads per page (default 20)
 */
import express from 'express';
import type { Server } from 'node:http';
import { loadSettings } from '../src/config/settings.js';
import { systemClock } from '../src/domain/clock.js';
import { composeCore, composeHttpApp } from '../src/main/composition-root.js';
import { createLogger } from '../src/observability/logger.js';
import { Metrics } from '../src/observability/metrics.js';
import { DashboardClient } from '../test/support/dashboard-client.js';
import { envInteger } from './support/env.js';
import { cleanup, runBenchmark, tempDirectory } from './support/processes.js';
import { seedDashboardAccount, type DashboardSeed } from './support/seed-dashboard.js';

const AIM_MS = 200;
const WARMUP = 3;
const config = {
  targets: envInteger('BENCH_TARGETS', 10_000, 10),
  risks: envInteger('BENCH_RISKS', 100_000, 1),
  scans: envInteger('BENCH_SCANS', 1_500, 1),
  requests: envInteger('BENCH_REQUESTS', 20, 1),
};
const log = (line = '') => process.stdout.write(`${line}\n`);

/** Server time of each request, in ms, under the label of the page being measured. */
const timings = new Map<string, number[]>();
let measuring: string | undefined;

function timed(app: express.Express): express.Express {
  const outer = express();
  outer.use((_req, res, next) => {
    const label = measuring;
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      if (label !== undefined) timings.set(label, [...(timings.get(label) ?? []), Number(process.hrtime.bigint() - start) / 1e6]);
    });
    next();
  });
  outer.use(app);
  return outer;
}

async function startService(dataDir: string): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const settings = loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'warn', VIGIL_PORT: '0' });
  const core = composeCore(settings, systemClock);
  const app = await composeHttpApp(settings, core, systemClock, createLogger('warn'), new Metrics({ defaultMetrics: false }), () => true);
  const server: Server = timed(app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    core.db.close();
  };
  return { baseUrl: `http://127.0.0.1:${port}`, close };
}

function pagesOf(seed: DashboardSeed, targetsPage2: string, risksPage2: string): Array<[string, string]> {
  const middle = <T>(items: readonly T[]) => items[Math.floor(items.length / 2)]!;
  return [
    ['overview', '/dashboard'],
    ['targets', '/dashboard/targets'],
    ['targets, page 2', targetsPage2],
    ['targets by tag', '/dashboard/targets?tag=pci'],
    ['targets by text', '/dashboard/targets?q=host-00500'],
    ['target', `/dashboard/targets/${middle(seed.targetIds)}`],
    ['scans', '/dashboard/scans'],
    ['scans, FAILED NMAP', '/dashboard/scans?state=FAILED&type=NMAP'],
    ['scan', `/dashboard/scans/${middle(seed.scanIds)}`],
    ['scheduled scans', '/dashboard/scheduled-scans'],
    ['scheduled scan', `/dashboard/scheduled-scans/${seed.scheduleIds[0]!}`],
    ['new scheduled scan', '/dashboard/scheduled-scans/new'],
    ['risks', '/dashboard/risks'],
    ['risks, page 2', risksPage2],
    ['risks, open critical', '/dashboard/risks?threat_level=CRITICAL&status=OPEN&accepted=no'],
    ['risks by target text', `/dashboard/risks?target=${encodeURIComponent('host-005000.bench.example.com')}`],
    ['risks, broad text', '/dashboard/risks?target=bench.example'],
    ['risks of a target', `/dashboard/risks?target_id=${middle(seed.targetIds)}`],
    ['risk', `/dashboard/risks/${middle(seed.riskIds)}`],
    ['webhooks', '/dashboard/webhooks'],
    ['API keys', '/dashboard/keys'],
  ];
}

async function nextPageOf(client: DashboardClient, path: string): Promise<string> {
  const page = await client.get(path);
  const next = /href="([^"]+)">Next page</.exec(page.text)?.[1];
  if (next === undefined) throw new Error(`${path} has no next page`);
  return next.replace(/&amp;/g, '&');
}

async function measure(client: DashboardClient, label: string, path: string): Promise<number> {
  let bytes = 0;
  for (let round = 0; round < WARMUP + config.requests; round++) {
    measuring = round < WARMUP ? undefined : label;
    const response = await client.get(path);
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${response.text.slice(0, 300)}`);
    bytes = response.text.length;
  }
  measuring = undefined;
  return bytes;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const dataDir = tempDirectory('vigil-bench-dashboard-');
  log(`Seeding ${config.targets} targets, ${config.risks} risks, ${config.scans} scans, 30 schedules ...`);
  const seedStart = performance.now();
  const seed = seedDashboardAccount(dataDir, { targets: config.targets, risks: config.risks, scans: config.scans, schedules: 30 });
  log(`Seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s.`);
  const service = await startService(dataDir);
  try {
    const client = await new DashboardClient(service.baseUrl).signedIn(seed.apiKey);
    const pages = pagesOf(seed, await nextPageOf(client, '/dashboard/targets'), await nextPageOf(client, '/dashboard/risks'));
    log(`\nServer time per page, ${config.requests} loads each after ${WARMUP} warm-up loads (ms):\n`);
    log(`${'page'.padEnd(24)}${'median'.padStart(8)}${'p95'.padStart(8)}${'max'.padStart(8)}${'KiB'.padStart(8)}`);
    let worst = 0;
    for (const [label, path] of pages) {
      const bytes = await measure(client, label, path);
      const sorted = [...timings.get(label)!].sort((a, b) => a - b);
      const p95 = quantile(sorted, 0.95);
      worst = Math.max(worst, p95);
      log(
        `${label.padEnd(24)}${quantile(sorted, 0.5).toFixed(1).padStart(8)}${p95.toFixed(1).padStart(8)}${sorted.at(-1)!.toFixed(1).padStart(8)}${(bytes / 1024).toFixed(1).padStart(8)}`,
      );
    }
    log(`\nEvery page under ${AIM_MS} ms at p95: ${worst < AIM_MS ? 'yes' : 'NO'} (slowest p95 ${worst.toFixed(1)} ms)`);
  } finally {
    await service.close();
  }
}

runBenchmark(main, cleanup, 900);
