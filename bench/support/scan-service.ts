/**
 * Vigil for the Scans benchmark, in this process: the same pieces as
 * composeVigil (src/main/composition-root.ts) wires, built here from the
 * exported classes because ComposeOptions has no way to swap the scanner
 * definitions. Differences from composeVigil, and nothing else:
 *
 * - the runner's scannerFor runs the fake nmap (fake-scanner.ts);
 * - the controller's ScanRepository is wrapped by an observer that, after
 *   every write the controller makes, counts RUNNING scans (exact, not
 *   sampled: one extra COUNT query per write), notes each SUCCEEDED or
 *   FAILED scan and when each was first saved RUNNING, and counts
 *   reconciles (the controller reads the scan once per reconcile);
 * - a second listener on the runner's change notices records when each
 *   workload last changed (for the fake, its exit), without acting on it;
 * - the scanner spawner, which composeVigil forks at start without waiting
 *   for it, is ready before the POSTs are sent, as in a service that has
 *   been up for a moment (under tsx it takes ~0.3 s to load).
 */
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { ScanRepository } from '../../src/app/ports.js';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { scannerEnvironment, type Settings } from '../../src/config/settings.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { createLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { composeCore, composeHttpApp, launchOptions, scanReconciler } from '../../src/main/composition-root.js';
import { ProcessWorkloadRunner } from '../../src/runtime/embedded/process-runner.js';
import { scannerForWithFakeNmap, type FakeKind } from './fake-scanner.js';

export interface ScanObservations {
  /** The most scans RUNNING at once, counted after every controller write. */
  maxRunning: number;
  /** performance.now() when each scan was first saved RUNNING (its workload started). */
  runningAt: Map<string, number>;
  /** performance.now() when each scan was saved SUCCEEDED. */
  succeededAt: Map<string, number>;
  /** Scans saved in another terminal state, with the state. */
  failed: Map<string, string>;
  /** performance.now() of the last runner change notice per scan (for the fake: its exit). */
  lastNoticeAt: Map<string, number>;
  /** Reconciles the controller ran (it reads the scan with findByIdUnscoped once per reconcile). */
  reconciles: number;
  /** Called after each terminal write; the benchmark waits on it. */
  onTerminal: () => void;
}

export interface BenchService {
  baseUrl: string;
  apiKey: string;
  core: ReturnType<typeof composeCore>;
  controller: ScanReconciler;
  observations: ScanObservations;
  close(): Promise<void>;
}

/** The controller's repository, with every write followed by a RUNNING count. */
function observed(repository: ScanRepository, observations: ScanObservations): ScanRepository {
  const afterWrite = (scan: Scan, saved: boolean) => {
    observations.maxRunning = Math.max(observations.maxRunning, repository.countInState('RUNNING'));
    if (!saved) return;
    if (scan.state === 'RUNNING') {
      if (!observations.runningAt.has(scan.id)) observations.runningAt.set(scan.id, performance.now());
      return;
    }
    if (scan.state === 'SUCCEEDED') observations.succeededAt.set(scan.id, performance.now());
    else if (scan.state === 'FAILED' || scan.state === 'STOPPED') observations.failed.set(scan.id, scan.state);
    else return;
    observations.onTerminal();
  };
  return new Proxy(repository, {
    get(target, property, receiver) {
      if (property === 'findByIdUnscoped') {
        return (id: string) => {
          observations.reconciles += 1;
          return target.findByIdUnscoped(id);
        };
      }
      if (property === 'save') {
        return (...args: Parameters<ScanRepository['save']>) => {
          const saved = target.save(...args);
          afterWrite(args[0], saved);
          return saved;
        };
      }
      if (property === 'saveWithResults') {
        return (...args: Parameters<ScanRepository['saveWithResults']>) => {
          const saved = target.saveWithResults(...args);
          afterWrite(args[0], saved);
          return saved;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export async function startBenchService(settings: Settings, fake: FakeKind): Promise<BenchService> {
  const clock = systemClock;
  const logger = createLogger(settings.logLevel);
  const core = composeCore(settings, clock);
  const { apiKey } = core.accounts.createAccount({ name: 'bench' });
  const metrics = new Metrics({ defaultMetrics: true });
  const observations: ScanObservations = {
    maxRunning: 0,
    runningAt: new Map(),
    succeededAt: new Map(),
    failed: new Map(),
    lastNoticeAt: new Map(),
    reconciles: 0,
    onTerminal: () => undefined,
  };

  const runner = new ProcessWorkloadRunner({
    workDir: join(settings.dataDir, 'work'),
    scannerFor: scannerForWithFakeNmap(fake),
    deadlineMs: settings.scanTimeoutSeconds * 1000,
    launch: launchOptions(settings),
    environment: scannerEnvironment(),
  });
  // The reconciler writes through the observed repository; it registers with the services itself.
  const controller = scanReconciler(
    settings,
    { ...core, scanRepository: observed(core.scanRepository, observations) as typeof core.scanRepository },
    { runner },
    clock,
    logger,
  );
  // Registered after the controller's own listener, so it never delays it.
  runner.onChange((scanId) => observations.lastNoticeAt.set(scanId, performance.now()));

  let accepting = false;
  const app = await composeHttpApp(settings, core, clock, logger, metrics, () => accepting);
  const server: Server = app.listen(settings.port, settings.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  accepting = true;
  // composeVigil's embedded runtime forks the spawner at start without waiting for it; a service that is up has it ready.
  await runner.prepare();
  controller.start();
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;

  const close = async (): Promise<void> => {
    accepting = false;
    const closing = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closing;
    await controller.stop();
    await runner.stopAll();
    core.db.close();
  };
  return { baseUrl: `http://127.0.0.1:${port}`, apiKey, core, controller, observations, close };
}
