/**
 * The service bench/scale.ts measures, in its own process so that the
 * client's work and memory are not counted as the server's: the core and
 * HTTP app composed as `vigil serve` composes them (report worker thread,
 * WAL checkpoints in turns of their own and the heap's growing factor included; no scan controller, scheduler or webhook dispatcher, which have
 * nothing to do here), behind a wrapper that watches the event loop.
 *
 * The longest block of the event loop: perf_hooks' monitorEventLoopDelay
 * samples the loop every RESOLUTION_MS, and its maximum since the last look
 * is the longest the loop was held (a tick late by up to the resolution,
 * which is subtracted). The bench asks for it after each request it sends
 * alone, so the figure is that request's longest block, and before and
 * after a phase of several at once, so the figure is the phase's.
 *
 * Garbage collection: a timer every RESOLUTION_MS finds the longest gap
 * between its ticks, and the GC pauses (PerformanceObserver) that began in
 * that gap are summed, so a block is told apart into the collector's pauses
 * and the request's own work.
 *
 * The machine's share: the main thread's line of /proc/self/task/<pid>/schedstat
 * (Linux) gives its time on a CPU and its time runnable but waiting for one.
 * Both are read at every tick, so a long gap or a slow request is told apart
 * into the thread's own work and time the machine gave to other processes.
 *
 *   GET /__bench/loop   { maxMs: longest block since the last look, gapMs: the longest gap the timer saw, gcInGapMs: the GC pauses
 *                         in it, gcKinds: theirs (minor, major, incremental, weak), gcMs: the longest GC pause, gapCpuMs and
 *                         gapWaitMs: the main thread's time on a CPU and waiting for one in that gap, cpuMs and waitMs: the same
 *                         since the last look (null where /proc has no schedstat) }, then starts again
 *   POST /__bench/endpoint   registers a webhook endpoint for the seeded account (https://hooks.example.com/vigil; nothing is
 *                            delivered, no dispatcher runs here), so that what the account records is also stored as events
 */
import express from 'express';
import { readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { loadVigil } from './compiled.js';
import type { Checkpoint } from '../../src/store/wal-checkpointer.js';

const { loadSettings } = await loadVigil<typeof import('../../src/config/settings.js')>('config/settings.js');
const { composeCore, composeHttpApp } = await loadVigil<typeof import('../../src/main/composition-root.js')>('main/composition-root.js');
const { systemClock } = await loadVigil<typeof import('../../src/domain/clock.js')>('domain/clock.js');
const { createLogger } = await loadVigil<typeof import('../../src/observability/logger.js')>('observability/logger.js');
const { Metrics } = await loadVigil<typeof import('../../src/observability/metrics.js')>('observability/metrics.js');
const { warmPageCache } = await loadVigil<typeof import('../../src/store/database.js')>('store/database.js');
const { WalCheckpointer } = await loadVigil<typeof import('../../src/store/wal-checkpointer.js')>('store/wal-checkpointer.js');
const { limitHeapGrowth } = await loadVigil<typeof import('../../src/main/heap-growth.js')>('main/heap-growth.js');

// As `vigil serve` does, first: the heap grows to at most 1.5 times what the last full collection kept.
limitHeapGrowth();

const RESOLUTION_MS = 5;
const [dataDir, port] = process.argv.slice(2) as [string, string];

const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();
// The longest garbage collection pause since the last look, and the last pauses, to find those inside the longest gap.
let gcMs = 0;
const pauses: PerformanceEntry[] = [];
new PerformanceObserver((entries) => {
  for (const entry of entries.getEntries()) {
    gcMs = Math.max(gcMs, entry.duration);
    pauses.push(entry);
  }
  if (pauses.length > 2_000) pauses.splice(0, pauses.length - 1_000);
}).observe({ entryTypes: ['gc'] });
const GC_KINDS = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weak'],
]);
/** The main thread's time on a CPU and waiting for one so far, in ms; null where the kernel keeps no schedstat. */
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
function scheduled(): { cpuMs: number; waitMs: number } | null {
  try {
    const [cpuNs, waitNs] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number);
    return { cpuMs: cpuNs! / 1e6, waitMs: waitNs! / 1e6 };
  } catch {
    return null;
  }
}
const since = (later: ReturnType<typeof scheduled>, earlier: ReturnType<typeof scheduled>) =>
  later === null || earlier === null ? null : { cpuMs: later.cpuMs - earlier.cpuMs, waitMs: later.waitMs - earlier.waitMs };
let gap = { ms: 0, from: 0, to: 0, scheduled: since(null, null) };
let tick = { at: performance.now(), scheduled: scheduled() };
let look = tick.scheduled;
setInterval(() => {
  const now = { at: performance.now(), scheduled: scheduled() };
  if (now.at - tick.at > gap.ms) gap = { ms: now.at - tick.at, from: tick.at, to: now.at, scheduled: since(now.scheduled, tick.scheduled) };
  tick = now;
}, RESOLUTION_MS);
function gapFigures() {
  const inGap = pauses.filter((pause) => pause.startTime >= gap.from && pause.startTime < gap.to);
  const checkpointsInGap = checkpoints.filter((checkpoint) => checkpoint.startedAt >= gap.from && checkpoint.startedAt < gap.to);
  const kinds = new Set(inGap.map((pause) => GC_KINDS.get((pause as PerformanceEntry & { detail?: { kind: number } }).detail?.kind ?? -1) ?? 'other'));
  const sinceLook = since(scheduled(), look);
  return {
    gapMs: Math.max(0, gap.ms - RESOLUTION_MS),
    gcInGapMs: inGap.reduce((sum, pause) => sum + pause.duration, 0),
    gcKinds: [...kinds].join('+'),
    checkpointInGapMs: checkpointsInGap.reduce((sum, checkpoint) => sum + checkpoint.ms, 0),
    checkpointInGapFrames: checkpointsInGap.reduce((sum, checkpoint) => sum + checkpoint.logFrames, 0),
    gapCpuMs: gap.scheduled?.cpuMs ?? null,
    gapWaitMs: gap.scheduled?.waitMs ?? null,
    cpuMs: sinceLook?.cpuMs ?? null,
    waitMs: sinceLook?.waitMs ?? null,
  };
}

// No rate limit: ten clients on one key are the point here.
const settings = loadSettings({
  VIGIL_DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  VIGIL_PORT: port,
  VIGIL_RATE_LIMIT_PER_SECOND: '1000000',
  VIGIL_RATE_LIMIT_BURST: '1000000',
});
const core = composeCore(settings, systemClock);
// As `vigil serve` does: the write-ahead log is checkpointed in turns of its own.
// Its checkpoints are kept, to name those inside the longest gap.
const checkpoints: Checkpoint[] = [];
const checkpointer = new WalCheckpointer(core.db, {
  onCheckpoint: (checkpoint) => {
    checkpoints.push(checkpoint);
    if (checkpoints.length > 2_000) checkpoints.splice(0, checkpoints.length - 1_000);
  },
});
// As `vigil serve` does before it takes requests: the page cache filled with the newest risks.
warmPageCache(core.db);
checkpointer.start();
const app = await composeHttpApp(settings, core, systemClock, createLogger('warn'), new Metrics({ defaultMetrics: false }), () => true);
const outer = express();
outer.get('/__bench/loop', (_req, res) => {
  // A block is recorded at the tick after it ends: two ticks later, every block before this request is in.
  setTimeout(() => {
    res.json({ maxMs: Math.max(0, delay.max / 1e6 - RESOLUTION_MS), gcMs, ...gapFigures() });
    delay.reset();
    gcMs = 0;
    gap = { ms: 0, from: 0, to: 0, scheduled: null };
    look = scheduled();
  }, 2 * RESOLUTION_MS);
});
outer.post('/__bench/endpoint', (_req, res) => {
  const { id } = core.db.prepare('SELECT id FROM accounts ORDER BY rowid LIMIT 1').get() as { id: string };
  res.json({ id: core.webhookEndpoints.add(id, 'https://hooks.example.com/vigil').id });
});
outer.use(app);
outer.listen(Number(port), '127.0.0.1');
process.once('SIGTERM', () => {
  void Promise.all([core.reportWorkers.close(), checkpointer.stop()]).finally(() => {
    core.db.close();
    process.exit(0);
  });
});
