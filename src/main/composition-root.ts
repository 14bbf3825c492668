/**
 * The one place that knows the concrete adapters (DESIGN.md): it opens the
 * store, builds the services on it, picks the runtime, and hands the
 * services to the HTTP edge. The Kubernetes half lives beside it in
 * kubernetes-runtime.ts.
 */
import type { Server } from 'node:http';
import { scannerEnvironment, type Settings } from '../config/settings.js';
import { buildOpenApiDocument } from '../api/openapi.js';
import { AccountsService } from '../app/accounts-service.js';
import { Paginator } from '../app/pagination.js';
import { TargetAttachmentsService } from '../app/target-attachments-service.js';
import { WebScanPreparation } from '../app/web-scan-preparation.js';
import { BrowserLoginReplayer } from '../runtime/login-replay/browser-login.js';
import { TargetsService } from '../app/targets-service.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { PageTokenCodec } from '../domain/lists/page-token.js';
import { createHttpApp } from '../http/app.js';
import { RateLimiter } from '../http/rate-limiter.js';
import type { Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { migrationsCheck, storeWritableCheck } from '../store/store-health.js';
import { pendingWebhookDeliveries, scanCountsByStateAndType } from '../store/operational-figures.js';
import { createMetricsApp } from '../http/metrics-app.js';
import type { ReadinessCheck } from '../app/ports/health.js';
import { SqliteAccountRepository } from '../store/accounts-repository.js';
import { openDatabase, serviceSecret, warmPageCache, type Database } from '../store/database.js';
import { SqliteTargetRepository } from '../store/targets-repository.js';
import { SqliteScanRepository } from '../store/scans-repository.js';
import { SqliteScanResourceMarks } from '../store/scan-resource-marks.js';
import { FileSystemResultFiles } from '../store/result-files.js';
import { FileSystemBackupFolders } from '../store/data-dir-backup.js';
import { BackupScheduler } from '../app/backup-scheduler.js';
import { SqlitePendingForgets } from '../store/pending-forgets-repository.js';
import { SqliteScanSweeps } from '../store/scan-sweeps.js';
import { SqlitePendingRecordings } from '../store/pending-recordings-repository.js';
import { recordedReports, referencedResultFiles } from '../store/result-file-index.js';
import { ScansService } from '../app/scans-service.js';
import { GroupCommit } from '../app/group-commit.js';
import { UploadsService } from '../app/uploads-service.js';
import { SqliteUploadTokenRepository } from '../store/upload-tokens-repository.js';
import { SqliteRiskRepository } from '../store/risks-repository.js';
import { SqliteEventOutbox } from '../store/event-outbox.js';
import { SqliteEventReceivers } from '../store/event-receivers.js';
import { SqliteRecordingStaging } from '../store/recording-staging.js';
import { RiskHistory } from '../app/risk-history.js';
import { RisksService } from '../app/risks-service.js';
import { ReportsService } from '../app/reports-service.js';
import { SavedReportsService } from '../app/saved-reports-service.js';
import { SqliteReportRepository } from '../store/reports-repository.js';
import { FileSystemReportFiles } from '../store/report-files.js';
import { ReportWorkers } from '../reports/report-workers.js';
import { siblingModule } from '../app/worker-thread.js';
import { loadPdfkit } from '../reports/pdf/pdf-document.js';
import { WalCheckpointer } from '../store/wal-checkpointer.js';
import { renderScanPdf } from '../reports/pdf/scan-pdf.js';
import { ScanPdfs } from '../app/scan-pdfs.js';
import { SqliteScanPdfRepository } from '../store/scan-pdfs-repository.js';
import { WebhookEndpointsService } from '../app/webhook-endpoints-service.js';
import { SqliteWebhookEndpointRepository } from '../store/webhook-endpoints-repository.js';
import { SqliteWebhookDeliveryRepository } from '../store/webhook-deliveries-repository.js';
import { SqliteWebhookDeliveryLog } from '../store/webhook-delivery-log.js';
import { DashboardSessionsService } from '../app/dashboard-sessions.js';
import { SqliteDashboardSessionRepository } from '../store/dashboard-sessions-repository.js';
import type { DashboardDeps } from '../http/dashboard/router.js';
import { WebhookDispatcher } from '../app/webhook-dispatcher.js';
import { NotifyingOutbox } from '../app/notifying-outbox.js';
import { createWebhookAgent, deliverWebhook } from '../runtime/webhooks/https-delivery.js';
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { SourcesService } from '../app/sources-service.js';
import { ImportsService } from '../app/imports-service.js';
import { SqliteSourceRepository } from '../store/sources-repository.js';
import { ScheduledScansService } from '../app/scheduled-scans-service.js';
import { SqliteScheduledScanRepository } from '../store/scheduled-scans-repository.js';
import { SqliteScheduledRunRepository } from '../store/scheduled-runs-repository.js';
import { SqliteDashboardReadRepository } from '../store/dashboard-read-repository.js';
import { DashboardService } from '../app/dashboard-service.js';
import { ScheduledScanReconciler, type ScheduledScanReconcilerOptions } from '../app/controller/scheduled-scan-reconciler.js';
import { RunNotifier } from '../app/run-notifier.js';
import { loggingMailer, smtpMailer } from '../runtime/email/mailers.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanReconciler } from '../app/controller/scan-reconciler.js';
import { systemTimers, type Timers } from '../app/controller/timer.js';
import { scannerFor } from '../domain/scanners/index.js';
import { systemResolver } from '../runtime/dns-resolver.js';
import { ProcessWorkloadRunner } from '../runtime/embedded/process-runner.js';
import { CONTAINER_USER, type LaunchOptions } from '../runtime/embedded/scanner-launch.js';
import type { ScheduledScan, WorkloadRunner } from '../app/ports.js';
import type { Scan } from '../domain/scans/scan.js';
import type { KubeConfig } from '../runtime/kubernetes/client-node.js';
import { kubernetesRuntime } from './kubernetes-runtime.js';
import type { ReconcileFace } from '../app/controller/faces.js';

export interface Vigil {
  db: Database;
  accounts: AccountsService;
  targets: TargetsService;
  scans: ScansService;
  risks: RisksService;
  reports: ReportsService;
  sources: SourcesService;
  scheduledScans: ScheduledScansService;
  imports: ImportsService;
  uploads: UploadsService;
  webhookEndpoints: WebhookEndpointsService;
  scanPdfs: ScanPdfs;
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
  kubeConfig?: KubeConfig;
  /** The report worker thread's module; tests pass one that wraps it. */
  reportWorker?: URL;
}

export type Core = ReturnType<typeof composeCore>;

/** The report worker thread's module (its own composition root). */
export const REPORT_WORKER = siblingModule('report-worker', import.meta.url);

/** Where scanners run and what keeps following them: started after the HTTP edge listens, stopped after it closes. */
export interface WorkloadRuntime {
  runner: WorkloadRunner;
  /** The Scan reconciler's poll of running workloads; null when the runner's change notices are complete. */
  pollMs?: number | null;
  /** The faces of Scans and ScheduledScans in this runtime (Kubernetes: their custom resources); none in the embedded runtime. */
  scanFace?: ReconcileFace<Scan>;
  scheduledScanFace?: ReconcileFace<ScheduledScan>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** How the embedded runtime finds and starts scanners: local programs, or images in docker or podman. */
export function launchOptions(settings: Settings): LaunchOptions {
  return {
    mode: settings.embeddedScanners,
    engine: settings.containerEngine,
    searchPath: settings.searchPath,
    uid: process.getuid?.() ?? CONTAINER_USER,
    gid: process.getgid?.() ?? CONTAINER_USER,
  };
}

/** The embedded runtime: scanners as child processes, none outliving the service. */
function embeddedRuntime(settings: Settings, logger: Logger): WorkloadRuntime {
  const runner = new ProcessWorkloadRunner({
    workDir: join(settings.dataDir, 'work'),
    scannerFor,
    deadlineMs: settings.scanTimeoutSeconds * 1000,
    cliPath: fileURLToPath(new URL('../cli/main.js', import.meta.url)),
    launch: launchOptions(settings),
    environment: scannerEnvironment(),
    nucleiTemplatesDir: settings.nucleiTemplatesDir,
    maxOutputBytes: settings.resultFileMaxBytes,
    onCleanupError: (scanId, error) => logger.warn({ scan_id: scanId, err: error }, "a finished scan's work directory could not be removed"),
  });
  // The scanner spawner is forked at start, so the first scans do not wait for it to load; listening does not wait for it either.
  return {
    runner,
    start: async () => {
      // A spawner that fails to start is forked again at the first scan, which then reports why.
      runner.prepare().catch(() => undefined);
    },
    stop: () => runner.stopAll(),
  };
}

/** Wrong API keys per client address: 20 at once, then one a second (README, Security). */
const AUTH_FAILURE_BURST = 20;
const AUTH_FAILURES_PER_SECOND = 1;

/** The dashboard's sessions on the store; failed sign-ins throttled per client address (10 at once, then one per 10 s). */
function dashboardDeps(settings: Settings, core: Core, clock: Clock): DashboardDeps {
  return {
    sessions: new DashboardSessionsService(new SqliteDashboardSessionRepository(core.db), core.accounts, core.accountRepository, clock),
    accounts: core.accounts,
    webhookEndpoints: core.webhookEndpoints,
    risks: core.risks,
    reports: core.reports,
    targets: core.targets,
    scans: core.scans,
    scheduledScans: core.scheduledScans,
    dashboard: new DashboardService(new SqliteDashboardReadRepository(core.db), core.scanRepository, core.scheduledScanRepository, clock),
    publicUrl: settings.publicUrl,
    signInLimiter: new RateLimiter(0.1, 10, clock),
  };
}

/** Signed webhook delivery over the guarded HTTPS agent (public addresses only, TLS verified, plus VIGIL_WEBHOOK_CA_FILE). */
function webhookDispatcher(settings: Settings, core: Core, clock: Clock, logger: Logger, metrics?: Metrics): WebhookDispatcher {
  const agent = createWebhookAgent({
    extraCaPem: settings.webhookCaFile === undefined ? undefined : readFileSync(settings.webhookCaFile, 'utf8'),
    allow: settings.allowTargets,
  });
  return new WebhookDispatcher({
    deliveries: new SqliteWebhookDeliveryRepository(core.db, { clock }),
    deliver: async (endpoint, body, timestampMs) => {
      const result = await deliverWebhook({ url: endpoint.url, secret: endpoint.secret, body, timestampMs, agent });
      metrics?.webhookDeliveries.inc({ outcome: result.ok ? 'delivered' : 'failed' });
      // The tenant's delivery log names the rule; the address the name resolved to stays in the service's log.
      if (result.refusedAddress !== undefined)
        logger.warn({ endpoint_id: endpoint.id, address: result.refusedAddress }, `webhook delivery refused: ${result.error}`);
      return result;
    },
    clock,
    timers: systemTimers(clock),
    onError: (error) => logger.error({ err: error }, 'webhook dispatch failed; trying again at the next poll'),
  });
}

/**
 * The Scan reconciler over the runtime's runner and face (benchmarks pass
 * their own runner), registered with the services that write Scans.
 */
export function scanReconciler(
  settings: Settings,
  core: Core,
  runtime: Pick<WorkloadRuntime, 'runner' | 'pollMs' | 'scanFace'>,
  clock: Clock,
  logger: Logger,
  metrics?: Metrics,
): ScanReconciler {
  const reconciler = new ScanReconciler({
    ...(metrics === undefined ? {} : { queueObserver: metrics.queueObserver('scan') }),
    scans: core.scanRepository,
    accounts: core.accountRepository,
    runner: runtime.runner,
    ...(runtime.scanFace === undefined ? {} : { face: runtime.scanFace }),
    ...(runtime.pollMs === undefined ? {} : { pollMs: runtime.pollMs }),
    resolver: systemResolver,
    resultFiles: core.resultFiles,
    scanPdfs: core.scanPdfs,
    history: core.history,
    staging: core.staging,
    clock,
    timers: systemTimers(clock),
    maxConcurrentScans: settings.maxConcurrentScans,
    allowTargets: settings.allowTargets,
    resultFileMaxBytes: settings.resultFileMaxBytes,
    commit: (work) => core.commits.run(work),
    // Embedded: the service replays logins itself; Kubernetes: the scan's Job does (login-step.ts).
    preparation: new WebScanPreparation(
      core.targetRepository,
      settings.runtime === 'embedded'
        ? new BrowserLoginReplayer({
            chromiumPath: settings.chromiumPath,
            allowTargets: settings.allowTargets,
            resolver: systemResolver,
            onRefused: (refusal) => logger.warn({ host: refusal.host, address: refusal.address }, `the login browser was refused a host: ${refusal.reason}`),
          })
        : undefined,
      { resolver: systemResolver, allowTargets: settings.allowTargets },
    ),
    onError: (key, error) => logger.warn({ key, err: error }, 'scan not reconciled; will retry'),
    onAddressRefused: (refusal) =>
      logger.warn({ scan_id: refusal.scanId, host: refusal.host, address: refusal.address }, `a scan host was refused: ${refusal.reason}`),
  });
  core.scans.onScanChanged((scan) => reconciler.enqueue(scan));
  core.imports.onScanChanged((scan) => reconciler.enqueue(scan));
  return reconciler;
}

/**
 * The ScheduledScan reconciler: creates the Scans of schedules when they
 * are due (DESIGN.md 9) and keeps their faces; registered with the service
 * that writes them. Tests build it the same way with their own clock and hooks.
 */
export function scheduledScanReconciler(
  core: Core,
  clock: Clock,
  timers: Timers,
  hooks: Pick<ScheduledScanReconcilerOptions, 'onError' | 'onRun' | 'queueObserver' | 'face'>,
): ScheduledScanReconciler {
  const reconciler = new ScheduledScanReconciler({
    scheduledScans: core.scheduledScanRepository,
    runs: core.scheduledRuns,
    accounts: core.accountRepository,
    targets: core.targetRepository,
    scans: core.scans,
    clock,
    timers,
    ...hooks,
  });
  core.scheduledScans.onChanged((scheduledScan, spec) => reconciler.enqueue(scheduledScan, spec));
  return reconciler;
}

/** E-mails each scheduled run's summary once its Scans are done: over SMTP, or into the log when VIGIL_SMTP_URL is unset. */
function runNotifier(settings: Settings, core: Core, clock: Clock, logger: Logger): RunNotifier {
  return new RunNotifier({
    runs: core.scheduledRuns,
    scans: core.scanRepository,
    risks: core.riskRepository,
    mailer: settings.smtpUrl === undefined ? loggingMailer(logger, settings.smtpFrom) : smtpMailer(settings.smtpUrl, settings.smtpFrom),
    clock,
    timers: systemTimers(clock),
    publicUrl: settings.publicUrl,
    onSent: (run) => logger.info({ scheduled_scan_id: run.scheduledScanId, run_at: run.runAt, to: run.emailTo }, 'scheduled run e-mail sent'),
    onFailed: (run, error, willRetry) =>
      logger[willRetry ? 'warn' : 'error'](
        { scheduled_scan_id: run.scheduledScanId, run_at: run.runAt, attempts: run.emailAttempts, err: error },
        willRetry ? 'scheduled run e-mail not sent; will retry' : 'scheduled run e-mail not sent; giving up',
      ),
  });
}

/** Store and services only: what the CLI needs, without the HTTP edge. */
export function composeCore(settings: Settings, clock: Clock = systemClock, reportWorker: URL = REPORT_WORKER) {
  const db = openDatabase(settings.dataDir);
  const accountRepository = new SqliteAccountRepository(db);
  const accounts = new AccountsService(accountRepository, clock);
  const paginator = new Paginator(new PageTokenCodec(serviceSecret(db, 'page-token-key')));
  const targetRepository = new SqliteTargetRepository(db);
  const targets = new TargetsService(targetRepository, paginator, clock, settings.allowTargets);
  const targetAttachments = new TargetAttachmentsService(targetRepository, clock);
  const scanRepository = new SqliteScanRepository(db);
  const resultFiles = new FileSystemResultFiles(join(settings.dataDir, 'results'));
  const riskRepository = new SqliteRiskRepository(db);
  const pendingRecordings = new SqlitePendingRecordings(db);
  const staging = new SqliteRecordingStaging(db);
  const history = new RiskHistory(
    riskRepository,
    targetRepository,
    clock,
    pendingRecordings,
    new SqliteEventReceivers(db),
    staging,
    new SqlitePendingForgets(db),
    new SqliteScanSweeps(db),
  );
  const outbox = new NotifyingOutbox(new SqliteEventOutbox(db));
  // Writes of the same turn of the event loop in one transaction, one disk flush: POST /v1/scans and the Scan controller's state changes.
  const commits = new GroupCommit(
    (fn) => db.transaction(fn).immediate(),
    () => db.inTransaction,
  );
  const scanPdfs = new ScanPdfs({
    repository: new SqliteScanPdfRepository(db),
    scans: scanRepository,
    accounts: accountRepository,
    resultFiles,
    render: renderScanPdf,
    clock,
  });
  const scans = new ScansService(scanRepository, targetRepository, targets, paginator, clock, resultFiles, history, outbox, commits, scanPdfs);
  const uploads = new UploadsService(
    new SqliteUploadTokenRepository(db),
    new FileSystemResultFiles(join(settings.dataDir, 'uploads')),
    clock,
    settings.resultFileMaxBytes,
  );
  const webhookEndpoints = new WebhookEndpointsService(
    new SqliteWebhookEndpointRepository(db),
    accountRepository,
    clock,
    settings.allowTargets,
    outbox,
    new SqliteWebhookDeliveryLog(db),
  );
  const risks = new RisksService(riskRepository, targetRepository, history, outbox, paginator);
  const reportRepository = new SqliteReportRepository(db);
  const reportFiles = new FileSystemReportFiles(join(settings.dataDir, 'reports'));
  const savedReports = new SavedReportsService(reportRepository, reportFiles, paginator);
  // Reports are read and rendered in worker threads on their own read-only connections: one report must not stall every request.
  const reportWorkers = new ReportWorkers({ module: reportWorker, dataDir: settings.dataDir });
  const reports = new ReportsService(reportRepository, reportFiles, reportWorkers, clock);
  const sources = new SourcesService(new SqliteSourceRepository(db), paginator, clock);
  const scheduledScanRepository = new SqliteScheduledScanRepository(db);
  const scheduledScans = new ScheduledScansService(scheduledScanRepository, paginator, clock);
  const scheduledRuns = new SqliteScheduledRunRepository(db);
  const imports = new ImportsService(
    sources,
    targets,
    scanRepository,
    resultFiles,
    history,
    clock,
    settings.allowTargets,
    pendingRecordings,
    staging,
    scanPdfs,
  );
  const scanResourceMarks = new SqliteScanResourceMarks(db);
  return {
    db,
    commits,
    accounts,
    accountRepository,
    targets,
    targetAttachments,
    targetRepository,
    scans,
    scanRepository,
    scanResourceMarks,
    resultFiles,
    scanPdfs,
    uploads,
    riskRepository,
    history,
    staging,
    outbox,
    risks,
    reports,
    savedReports,
    reportWorkers,
    sources,
    scheduledScans,
    scheduledScanRepository,
    scheduledRuns,
    imports,
    webhookEndpoints,
  };
}

/**
 * Start-up hygiene (issue 16): risk recordings a crash cut short are rolled
 * back (an upload entirely; a scan Vigil ran then fails as WorkloadLost, or
 * is collected again when its workload still has its output), and result
 * files no row references, temporary files, report folders without a row
 * (a report is recorded last) and the embedded runtime's left-over work
 * directories are removed; scan deletions a crash cut short get the rest
 * of their risks recomputed.
 */
async function recoverFromCrash(settings: Settings, core: Core, logger: Logger): Promise<void> {
  const interrupted = core.history.rollBackInterrupted();
  await core.imports.discardInterrupted(interrupted);
  const deletions = core.history.finishInterruptedForgets((events) => core.outbox.append(events));
  const referenced = referencedResultFiles(core.db);
  const reports = recordedReports(core.db);
  // Files scanner pods uploaded wait in uploads/ until their Scan is collected; a finished or deleted Scan's are stale.
  const collecting = new Set(core.scanRepository.idsInStates(['QUEUED', 'RUNNING', 'STOPPING']));
  const removed = [
    ...(await core.resultFiles.sweep((scanId, fileName) => referenced.has(`${scanId}/${fileName}`))),
    ...(await new FileSystemResultFiles(join(settings.dataDir, 'uploads')).sweep((scanId) => collecting.has(scanId))),
    ...(await removeWorkDirectories(join(settings.dataDir, 'work'))),
    ...(await new FileSystemReportFiles(join(settings.dataDir, 'reports')).sweep((reportId) => reports.has(reportId))),
  ];
  if (interrupted.length > 0 || removed.length > 0 || deletions.length > 0) {
    logger.warn(
      { rolled_back: interrupted, finished_scan_deletions: deletions, removed_files: removed.slice(0, 100), removed_count: removed.length },
      'removed what an interrupted run left behind',
    );
  }
}

/**
 * The embedded runtime's work directories (`work/<scan id>`): a scanner's
 * process never outlives the service (its spawner kills it), so at start-up
 * every one is left over, from a scan that failed as WorkloadLost or whose
 * removal after release did not finish; none is read again.
 */
async function removeWorkDirectories(workDir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(workDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  await Promise.all(entries.map((entry) => rm(join(workDir, entry), { recursive: true, force: true })));
  return entries.map((entry) => `work/${entry}`);
}

/** Resolves once the server listens; rejects with the listen error (a port in use). */
async function listening(server: Server): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}

/**
 * The HTTP edge on the core's services: /v1, the dashboard, health and
 * metrics (benchmarks build it the same way). The PDF library is loaded
 * first, so no request's turn (a scan PDF downloaded before it was rendered,
 * or the first rendered after a scan) spends 80 ms evaluating it.
 */
export async function composeHttpApp(
  settings: Settings,
  core: Core,
  clock: Clock,
  logger: Logger,
  metrics: Metrics,
  isAccepting: () => boolean,
  readiness?: () => Promise<ReadinessCheck[]>,
) {
  await loadPdfkit();
  return createHttpApp({
    document: buildOpenApiDocument(),
    compileValidatorsInBackground: true,
    accounts: core.accounts,
    targets: core.targets,
    targetAttachments: core.targetAttachments,
    scans: core.scans,
    risks: core.risks,
    reports: core.reports,
    savedReports: core.savedReports,
    sources: core.sources,
    scheduledScans: core.scheduledScans,
    imports: core.imports,
    uploads: core.uploads,
    rateLimiter: new RateLimiter(settings.rateLimit.perSecond, settings.rateLimit.burst, clock),
    authFailureLimiter: new RateLimiter(AUTH_FAILURES_PER_SECOND, AUTH_FAILURE_BURST, clock),
    logger,
    metrics,
    metricsOnThisPort: settings.metricsPort === undefined,
    isAccepting,
    ...(readiness === undefined ? {} : { readiness }),
    dashboard: dashboardDeps(settings, core, clock),
  });
}

/** VIGIL_BACKUP_DIR: backups made by `serve` itself on its schedule (a CronJob cannot mount the volume Vigil holds). */
function backupScheduler(settings: Settings, clock: Clock, logger: Logger): BackupScheduler | undefined {
  if (settings.backup === undefined) return undefined;
  const { dir, schedule, keep } = settings.backup;
  return new BackupScheduler({
    folders: new FileSystemBackupFolders(settings.dataDir, dir),
    schedule,
    keep,
    timers: systemTimers(clock),
    onBackup: (folder, removed) => logger.info({ backup: join(dir, folder), removed }, 'backup written'),
    onError: (error) => logger.error({ err: error, backup_dir: dir }, 'scheduled backup failed'),
  });
}

export function composeVigil(settings: Settings, logger: Logger, options: ComposeOptions = {}): Vigil {
  const clock = options.clock ?? systemClock;
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics ?? true });
  const core: Core = composeCore(settings, clock, options.reportWorker);
  core.history.observeFindings((scanType, count) => metrics.uploadFindings.inc({ scan_type: scanType }, count));
  metrics.watchRecord({ scansByStateAndType: () => scanCountsByStateAndType(core.db), pendingWebhookDeliveries: () => pendingWebhookDeliveries(core.db) });
  let server: Server | undefined;
  let metricsServer: Server | undefined;
  let accepting = false;
  /** The runtime started: on Kubernetes its informers have listed what they watch. */
  let runtimeStarted = false;
  const readiness = async (): Promise<ReadinessCheck[]> => [
    migrationsCheck(core.db),
    await storeWritableCheck(core.db, settings.dataDir),
    runtimeStarted
      ? { name: 'runtime', ok: true }
      : {
          name: 'runtime',
          ok: false,
          message: `the ${settings.runtime} runtime is starting${settings.runtime === 'kubernetes' ? ' (informers listing)' : ''}`,
        },
  ];

  const listen = async (): Promise<Server> => {
    // Before anything can write a file or an upload: what a crash left behind goes first.
    await recoverFromCrash(settings, core, logger);
    warmPageCache(core.db);
    checkpointer.start();
    const app = await composeHttpApp(settings, core, clock, logger, metrics, () => accepting, readiness);
    const bound = await listening(app.listen(settings.port, settings.host));
    server = bound;
    if (settings.metricsPort !== undefined) metricsServer = await listening(createMetricsApp(metrics).listen(settings.metricsPort, settings.host));
    accepting = true;
    // The runtime first: on Kubernetes its informers must have listed the Jobs before the controller looks at running Scans.
    await runtime.start();
    runtimeStarted = true;
    controller.start();
    // After the sweep of what a crash left: the PDFs of SUCCEEDED scans that are still to be made.
    core.scanPdfs.renderPending();
    scheduler.start();
    notifier.start();
    dispatcher.start();
    backups?.start();
    return bound;
  };

  const runtime =
    settings.runtime === 'kubernetes' ? kubernetesRuntime(settings, core, clock, logger, options.kubeConfig, metrics) : embeddedRuntime(settings, logger);
  // One reconciler per Kind, the same in both runtimes; the runtime gives each its face (Kubernetes: the custom resources).
  const controller = scanReconciler(settings, core, runtime, clock, logger, metrics);
  metrics.watchQueue('scan', controller.queue);
  core.scanPdfs.onError((file, error) =>
    logger.error(
      { scan_id: file.scanId, result_id: file.resultId, err: error },
      "a scan's PDF could not be made; it is made again at the next start or at its download",
    ),
  );
  const dispatcher = webhookDispatcher(settings, core, clock, logger, metrics);
  core.outbox.onAppended(() => dispatcher.wake());
  const scheduler = scheduledScanReconciler(core, clock, systemTimers(clock), {
    ...(runtime.scheduledScanFace === undefined ? {} : { face: runtime.scheduledScanFace }),
    queueObserver: metrics.queueObserver('scheduled-scan'),
    onError: (key, error) => logger.warn({ key, err: error }, 'scheduled scan not reconciled; will retry'),
    onRun: (run) =>
      logger.info(
        { scheduled_scan_id: run.scheduledScanId, run_at: run.runAt, scan_ids: run.scanIds, skipped: run.skipped },
        'scheduled run created its scans',
      ),
  });
  metrics.watchQueue('scheduled-scan', scheduler.queue);
  const notifier = runNotifier(settings, core, clock, logger);
  const backups = backupScheduler(settings, clock, logger);
  const checkpointer = new WalCheckpointer(core.db, { onCheckpoint: metrics.checkpointed });

  const close = async (): Promise<void> => {
    accepting = false;
    for (const open of [server, metricsServer]) {
      if (open === undefined) continue;
      const closing = new Promise<void>((resolve) => open.close(() => resolve()));
      open.closeIdleConnections();
      await closing;
    }
    await backups?.stop();
    await scheduler.stop();
    await controller.stop();
    await core.scanPdfs.idle();
    await notifier.stop();
    await dispatcher.stop();
    await runtime.stop();
    await core.reportWorkers.close();
    await checkpointer.stop();
    core.db.close();
  };

  return { ...core, metrics, listen, close };
}
