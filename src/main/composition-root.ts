/**
 * The one place that knows the concrete adapters (DESIGN.md): it opens the
 * store, builds the services on it, and hands them to the HTTP edge.
 */
import type { Server } from 'node:http';
import type { Settings } from '../config/settings.js';
import { buildOpenApiDocument } from '../api/openapi.js';
import { AccountsService } from '../app/accounts-service.js';
import { Paginator } from '../app/pagination.js';
import { TargetsService } from '../app/targets-service.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { PageTokenCodec } from '../domain/lists/page-token.js';
import { createHttpApp } from '../http/app.js';
import { RateLimiter } from '../http/rate-limiter.js';
import type { Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { SqliteAccountRepository } from '../store/accounts-repository.js';
import { openDatabase, serviceSecret, type Database } from '../store/database.js';
import { SqliteTargetRepository } from '../store/targets-repository.js';
import { SqliteScanRepository } from '../store/scans-repository.js';
import { FileSystemResultFiles } from '../store/result-files.js';
import { ScansService } from '../app/scans-service.js';
import { UploadsService } from '../app/uploads-service.js';
import { SqliteUploadTokenRepository } from '../store/upload-tokens-repository.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanController } from '../app/controller/scan-controller.js';
import { systemTimers } from '../app/controller/timer.js';
import { scannerFor } from '../domain/scanners/index.js';
import { systemResolver } from '../runtime/dns-resolver.js';
import { ProcessWorkloadRunner } from '../runtime/embedded/process-runner.js';
import * as k8s from '@kubernetes/client-node';
import type { ScanRepository, WorkloadRunner } from '../app/ports.js';
import { VIGIL_VERSION } from '../domain/scanners/index.js';
import { KubernetesJobRunner } from '../runtime/kubernetes/job-runner.js';
import { defaultJobSettings } from '../runtime/kubernetes/job-settings.js';
import { ScanCustomResources } from '../runtime/kubernetes/scan-resources.js';
import { MirroredScanRepository, ScanStatusMirror } from '../runtime/kubernetes/scan-status-mirror.js';
import type { ScanLocation } from '../runtime/kubernetes/job-runner.js';
import { AppliedScanAdopter } from '../runtime/kubernetes/applied-scans.js';
import { RestartingInformer } from '../runtime/kubernetes/restarting-informer.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION } from '../domain/scans/scan-resource.js';

export interface Vigil {
  db: Database;
  accounts: AccountsService;
  targets: TargetsService;
  scans: ScansService;
  uploads: UploadsService;
  metrics: Metrics;
  /** Starts listening; resolves with the bound server. */
  listen(): Promise<Server>;
  /** Stops accepting, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

export interface ComposeOptions {
  clock?: Clock;
  defaultMetrics?: boolean;
  /** The cluster for VIGIL_RUNTIME=kubernetes; by default the in-cluster config or KUBECONFIG. */
  kubeConfig?: k8s.KubeConfig;
}

type Core = ReturnType<typeof composeCore>;

/** Where a Scan lives in the cluster: its object name and its account's namespace. */
function locator(core: () => Core) {
  return (scanId: string): ScanLocation | undefined => {
    const scan = core().scanRepository.findByIdUnscoped(scanId);
    const account = scan && core().accountRepository.findById(scan.accountId);
    return scan && account ? { name: scan.name, namespace: account.namespace, type: scan.type } : undefined;
  };
}

/** The cluster side of VIGIL_RUNTIME=kubernetes: the Scan CRs mirror every Scan's status. */
function kubernetesParts(options: ComposeOptions, logger: Logger, core: () => Core) {
  const kubeConfig = options.kubeConfig ?? loadDefaultKubeConfig();
  const scanResources = new ScanCustomResources(kubeConfig);
  const mirror = new ScanStatusMirror({
    kubeConfig,
    scanResources,
    locate: locator(core),
    onError: (scanId, error) => logger.warn({ scan_id: scanId, err: error }, 'scan status not written to its custom resource'),
  });
  return { kubeConfig, scanResources, mirror, wrapScans: (repository: ScanRepository) => new MirroredScanRepository(repository, mirror) };
}

/** Where scanners run: child processes (embedded) or Jobs in each account's namespace (kubernetes). */
function workloadRunner(
  settings: Settings,
  core: Core,
  kubernetes: ReturnType<typeof kubernetesParts> | undefined,
  logger: Logger,
): { runner: WorkloadRunner; stopAll: () => Promise<void>; informer?: RestartingInformer<k8s.V1Job> } {
  if (kubernetes !== undefined) {
    const runner = new KubernetesJobRunner({
      kubeConfig: kubernetes.kubeConfig,
      scanResources: kubernetes.scanResources,
      uploads: core.uploads,
      jobSettings: defaultJobSettings(VIGIL_VERSION),
      uploadUrl: settings.publicUrl,
      locate: locator(() => core),
    });
    // Jobs outlive the service by design: a restart finds them again.
    return { runner, stopAll: () => kubernetes.mirror.flush(), informer: scannerJobInformer(kubernetes.kubeConfig, runner, logger) };
  }
  const runner = new ProcessWorkloadRunner({
    workDir: join(settings.dataDir, 'work'),
    scannerFor,
    deadlineMs: settings.scanTimeoutSeconds * 1000,
    cliPath: fileURLToPath(new URL('../cli/main.js', import.meta.url)),
  });
  return { runner, stopAll: () => runner.stopAll() };
}

const MANAGED_JOBS = 'app.kubernetes.io/managed-by=vigil';

/** Watches Vigil's scanner Jobs so that a Job's progress or end is reconciled at once, not at the next poll. */
function scannerJobInformer(kubeConfig: k8s.KubeConfig, runner: KubernetesJobRunner, logger: Logger) {
  const batch = kubeConfig.makeApiClient(k8s.BatchV1Api);
  return new RestartingInformer<k8s.V1Job>({
    kubeConfig,
    path: '/apis/batch/v1/jobs',
    labelSelector: MANAGED_JOBS,
    list: () => batch.listJobForAllNamespaces({ labelSelector: MANAGED_JOBS }),
    onObject: (_event, job) => {
      const scanId = job.metadata?.labels?.['vigil.dev/scan-id'];
      if (scanId !== undefined) runner.jobChanged(scanId);
    },
    onError: (error, restartInMs) => logger.warn({ err: error, restart_in_ms: restartInMs }, 'job informer stopped; restarting'),
    timers: systemTimers(),
  });
}

/** Watches Scan CRs in every namespace so that Scans applied with kubectl are started for their namespace's account. */
function appliedScansInformer(kubeConfig: k8s.KubeConfig, core: Core, clock: Clock, logger: Logger) {
  const adopter = new AppliedScanAdopter({ kubeConfig, accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace), scans: core.scans, clock });
  const customObjects = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  return new RestartingInformer<k8s.KubernetesObject>({
    kubeConfig,
    path: `/apis/${SCAN_GROUP}/${SCAN_VERSION}/${SCAN_PLURAL}`,
    list: async () => (await customObjects.listClusterCustomObject({ group: SCAN_GROUP, version: SCAN_VERSION, plural: SCAN_PLURAL })) as k8s.KubernetesListObject<k8s.KubernetesObject>,
    onObject: (event, object) => {
      if (event === 'delete') return;
      adopter.handle(object).catch((error: unknown) => logger.warn({ name: object.metadata?.name, namespace: object.metadata?.namespace, err: error }, 'applied scan not handled'));
    },
    onError: (error, restartInMs) => logger.warn({ err: error, restart_in_ms: restartInMs }, 'scan informer stopped; restarting'),
    timers: systemTimers(clock),
  });
}

function loadDefaultKubeConfig(): k8s.KubeConfig {
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromDefault(); // in-cluster service account, else KUBECONFIG, else ~/.kube/config
  return kubeConfig;
}

/** Store and services only: what the CLI needs, without the HTTP edge. */
export function composeCore(settings: Settings, clock: Clock = systemClock, wrapScans: (repository: ScanRepository) => ScanRepository = (repository) => repository) {
  const db = openDatabase(settings.dataDir);
  const accountRepository = new SqliteAccountRepository(db);
  const accounts = new AccountsService(accountRepository, clock);
  const paginator = new Paginator(new PageTokenCodec(serviceSecret(db, 'page-token-key')));
  const targetRepository = new SqliteTargetRepository(db);
  const targets = new TargetsService(targetRepository, paginator, clock, settings.allowTargets);
  const scanRepository = wrapScans(new SqliteScanRepository(db));
  const resultFiles = new FileSystemResultFiles(join(settings.dataDir, 'results'));
  const scans = new ScansService(scanRepository, targetRepository, targets, paginator, clock, resultFiles);
  const uploads = new UploadsService(
    new SqliteUploadTokenRepository(db),
    new FileSystemResultFiles(join(settings.dataDir, 'uploads')),
    clock,
    settings.resultFileMaxBytes,
  );
  return { db, accounts, accountRepository, targets, scans, scanRepository, resultFiles, uploads };
}

export function composeVigil(settings: Settings, logger: Logger, options: ComposeOptions = {}): Vigil {
  const clock = options.clock ?? systemClock;
  const kubernetes = settings.runtime === 'kubernetes' ? kubernetesParts(options, logger, () => core) : undefined;
  const core: Core = composeCore(settings, clock, kubernetes?.wrapScans);
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics ?? true });
  let server: Server | undefined;
  let accepting = false;

  const listen = async (): Promise<Server> => {
    const app = await createHttpApp({
      document: buildOpenApiDocument(),
      accounts: core.accounts,
      targets: core.targets,
      scans: core.scans,
      uploads: core.uploads,
      rateLimiter: new RateLimiter(settings.rateLimit.perSecond, settings.rateLimit.burst, clock),
      logger,
      metrics,
      isAccepting: () => accepting,
    });
    const bound = app.listen(settings.port, settings.host);
    await new Promise<void>((resolve, reject) => {
      bound.once('listening', resolve);
      bound.once('error', reject);
    });
    server = bound;
    accepting = true;
    controller.start();
    await scanInformer?.start();
    await jobInformer?.start();
    return bound;
  };

  const { runner, stopAll, informer: jobInformer } = workloadRunner(settings, core, kubernetes, logger);
  const controller = new ScanController({
    scans: core.scanRepository,
    runner,
    resolver: systemResolver,
    resultFiles: core.resultFiles,
    clock,
    timers: systemTimers(clock),
    maxConcurrentScans: settings.maxConcurrentScans,
    allowTargets: settings.allowTargets,
    onError: (scanId, error) => logger.error({ scan_id: scanId, err: error }, 'scan reconcile failed'),
  });
  core.scans.onScanChanged((scanId) => controller.enqueue(scanId));
  const scanInformer = kubernetes === undefined ? undefined : appliedScansInformer(kubernetes.kubeConfig, core, clock, logger);

  const close = async (): Promise<void> => {
    accepting = false;
    if (server !== undefined) {
      const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
      server.closeIdleConnections();
      await closing;
    }
    await scanInformer?.stop();
    await jobInformer?.stop();
    await controller.stop();
    await stopAll();
    core.db.close();
  };

  return { ...core, metrics, listen, close };
}
