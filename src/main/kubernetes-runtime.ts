/**
 * The composition root's Kubernetes half (VIGIL_RUNTIME=kubernetes):
 * scanners run as Jobs in each account's namespace, informers on Vigil's
 * Jobs and pods tell the Scan reconciler every change (no polling), and
 * each Scan and ScheduledScan has a face, its custom resource (the row is
 * the record; the CR's spec an input, its status a projection), read from
 * informer caches. The reconcilers themselves are the same in both runtimes
 * (composition-root.ts builds them with these faces).
 */
import * as k8s from '../runtime/kubernetes/client-node.js';
import { customResourceInformer as informerOnCustomResources } from '../runtime/kubernetes/custom-resource-informer.js';
import { systemTimers } from '../app/controller/timer.js';
import type { Clock } from '../domain/clock.js';
import { VIGIL_VERSION } from '../domain/scanners/index.js';
import { SCAN_API_VERSION, SCAN_GROUP, SCAN_KIND, SCAN_PLURAL, SCAN_VERSION } from '../domain/scans/scan-resource.js';
import { SCANS_HISTORY_LIMITS, SCHEDULED_SCAN_API_VERSION, SCHEDULED_SCAN_KIND, SCHEDULED_SCAN_PLURAL } from '../domain/schedules/scheduled-scan-resource.js';
import { ScheduledScanResourceFace, type ScheduledScanObject } from '../runtime/kubernetes/scheduled-scan-face.js';
import type { Logger } from '../observability/logger.js';
import { observeKubeRequests } from '../runtime/kubernetes/kube-api.js';
import type { Metrics } from '../observability/metrics.js';
import { KubernetesJobRunner, type ScanLocation } from '../runtime/kubernetes/job-runner.js';
import { ScanRequestBudget } from '../runtime/kubernetes/request-budget.js';
import { JobObserver } from '../runtime/kubernetes/job-observer.js';
import { checkJobSettings, defaultJobSettings, jobSettingsFrom, type JobSettings } from '../runtime/kubernetes/job-settings.js';
import { readFileSync } from 'node:fs';
import { SettingsError, type Settings } from '../config/settings.js';
import { ScanCustomResources } from '../runtime/kubernetes/scan-resources.js';
import { ScanResourceFace, type HistoryLimits, type ScanObject } from '../runtime/kubernetes/scan-face.js';
import { KubernetesEventRecorder } from '../runtime/kubernetes/event-recorder.js';
import type { Core, WorkloadRuntime } from './composition-root.js';
import { shareAgents } from '../runtime/kubernetes/shared-agent.js';
import { NamespaceSet } from '../runtime/kubernetes/namespace-set.js';
import { dataVersion } from '../store/database.js';

/** Where a Scan lives in the cluster: its object name and its account's namespace. */
function locator(core: Core) {
  return (scanId: string): ScanLocation | undefined => {
    const scan = core.scanRepository.findByIdUnscoped(scanId);
    const account = scan && core.accountRepository.findById(scan.accountId);
    return scan && account ? { name: scan.name, namespace: account.namespace, type: scan.type } : undefined;
  };
}

function loadDefaultKubeConfig(): k8s.KubeConfig {
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromDefault(); // in-cluster service account, else KUBECONFIG, else ~/.kube/config
  return kubeConfig;
}

/**
 * The namespaces bound to accounts, where every informer watches (and the
 * only ones): re-read when another process committed to the database (an
 * account created with `vigil accounts create` while the service runs) or
 * this one added an account (namespace-set.ts).
 */
function boundNamespaces(core: Core, clock: Clock, logger: Logger): NamespaceSet {
  return new NamespaceSet({
    read: () => core.accountRepository.list().map((account) => account.namespace),
    version: () => `${dataVersion(core.db)}/${core.accountRepository.count()}`,
    timers: systemTimers(clock),
    onError: (error) => logger.warn({ err: error }, 'accounts not re-read for new namespaces; will retry'),
  });
}

/** What every part of the Kubernetes runtime shares: the client configuration, the bound namespaces and the metrics. */
interface Cluster {
  kubeConfig: k8s.KubeConfig;
  namespaces: NamespaceSet;
  metrics?: Metrics;
}

/** Defaults, with the operator's VIGIL_JOB_SETTINGS_FILE laid over them; a bad file stops start-up with the reason. */
function jobSettings(file: string | undefined): JobSettings {
  const defaults = defaultJobSettings(VIGIL_VERSION);
  if (file === undefined) return checkJobSettings(defaults);
  let overrides: unknown;
  try {
    overrides = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SettingsError(`VIGIL_JOB_SETTINGS_FILE ${file} could not be read as JSON: ${(error as Error).message}`);
  }
  try {
    return jobSettingsFrom(overrides, defaults);
  } catch (error) {
    throw new SettingsError(`VIGIL_JOB_SETTINGS_FILE ${file}: ${(error as Error).message}`);
  }
}

export interface KubernetesRuntime extends WorkloadRuntime {
  scanFace: ScanResourceFace;
  scheduledScanFace: ScheduledScanResourceFace;
}

/**
 * The Kubernetes runtime, built after the store and its services: the
 * faces of Scans and ScheduledScans (their custom resources, read from
 * informer caches) for the two reconcilers, and the Job runner with its
 * informers on Jobs and pods (no polling). It starts its informers; the
 * reconcilers, which register with the faces, start after it.
 */
export function kubernetesRuntime(settings: Settings, core: Core, clock: Clock, logger: Logger, given?: k8s.KubeConfig, metrics?: Metrics): KubernetesRuntime {
  const kubeConfig = given ?? loadDefaultKubeConfig();
  shareAgents(kubeConfig); // one keep-alive Agent for every request, not one per request (shared-agent.ts)
  if (metrics !== undefined) observeKubeRequests(kubeConfig, (verb, code) => metrics.kubernetesRequests.inc({ verb, code: String(code) }));
  const cluster: Cluster = { kubeConfig, namespaces: boundNamespaces(core, clock, logger), ...(metrics === undefined ? {} : { metrics }) };
  // Each scan's requests, counted where they are sent (request-budget.ts): progress is written on its own only within the budget.
  const budget = new ScanRequestBudget();
  const spend = (scanId: string) => budget.spend(scanId);
  const observer = new JobObserver({
    kubeConfig,
    namespaces: cluster.namespaces,
    timers: systemTimers(clock),
    onError: (what, error) => logger.warn({ err: error }, what),
    onInformerRestart: (resource) => metrics?.informerRestarts.inc({ resource }),
    onRequest: spend,
  });
  const scheduled = scheduledScanFace(cluster, core, clock, logger);
  const scans = scanFace(cluster, core, clock, logger, budget, scheduled.face, settings.scanTtlAfterFinishedSeconds);
  const runner = new KubernetesJobRunner({
    observer,
    kubeConfig,
    scanResources: scans.resources,
    uploads: core.uploads,
    jobSettings: jobSettings(settings.jobSettingsFile),
    uploadUrl: settings.uploadUrl,
    locate: locator(core),
    allowTargets: settings.allowTargets.map((cidr) => cidr.text).join(','),
    onRequest: spend,
    onJobCreated: (scanId) => budget.started(scanId),
    onReleased: (scanId) => budget.drop(scanId),
    clock,
  });
  const informers = [observer, scans.informer, scheduled.informer];
  return {
    runner,
    scanFace: scans.face,
    scheduledScanFace: scheduled.face,
    // The observer's informers tell every change of a Job or pod: no poll.
    pollMs: null,
    start: async () => {
      cluster.namespaces.start();
      for (const informer of informers) await informer.start();
    },
    // Jobs outlive the service by design: the next process finds them again.
    stop: async () => {
      cluster.namespaces.stop();
      for (const informer of informers) await informer.stop();
      await Promise.all([scans.events.flush(), scheduled.events.flush()]);
    },
  };
}

/** An Event recorder for one Kind's objects, its failures logged. */
function eventRecorder(cluster: Cluster, clock: Clock, logger: Logger, defaults: { apiVersion: string; kind: string }): KubernetesEventRecorder {
  return new KubernetesEventRecorder({
    kubeConfig: cluster.kubeConfig,
    timers: systemTimers(clock),
    defaults,
    onError: (error) => logger.warn({ err: error }, 'kubernetes event not recorded'),
  });
}

/** A ScheduledScan's history limits, from its CR's spec as the informer holds it; the defaults where it says nothing. */
function historyLimitsOf(core: Core, scheduledScanId: string, cached: (namespace: string, name: string) => ScheduledScanObject | undefined): HistoryLimits {
  const row = core.scheduledScanRepository.findByIdUnscoped(scheduledScanId);
  const namespace = row && core.accountRepository.findById(row.accountId)?.namespace;
  const spec = (row && namespace !== undefined ? cached(namespace, row.objectName)?.spec : undefined) as
    { successfulScansHistoryLimit?: unknown; failedScansHistoryLimit?: unknown } | undefined;
  const limit = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback);
  return {
    successful: limit(spec?.successfulScansHistoryLimit, SCANS_HISTORY_LIMITS.successful),
    failed: limit(spec?.failedScansHistoryLimit, SCANS_HISTORY_LIMITS.failed),
  };
}

/** An informer on one kind of Vigil's custom resources in the namespaces bound to accounts (custom-resource-informer.ts), its failures logged. */
function customResourceInformer(
  { kubeConfig, namespaces, metrics }: Cluster,
  plural: string,
  face: { changed(object: k8s.KubernetesObject): void; listed(): void },
  clock: Clock,
  logger: Logger,
) {
  const singular = plural.replace(/s$/, '');
  return informerOnCustomResources({
    kubeConfig,
    namespaces,
    group: SCAN_GROUP,
    version: SCAN_VERSION,
    plural,
    onObject: (_event, object) => face.changed(object),
    onListed: () => face.listed(),
    onError: (error, restartInMs) => {
      metrics?.informerRestarts.inc({ resource: plural });
      logger.warn({ err: error, restart_in_ms: restartInMs }, `${singular} informer stopped; restarting`);
    },
    timers: systemTimers(clock),
  });
}

/** The Scans' face: their CRs in the bound namespaces, read from its informer's cache; a schedule's runs are owned by its CR. */
function scanFace(
  cluster: Cluster,
  core: Core,
  clock: Clock,
  logger: Logger,
  budget: ScanRequestBudget,
  scheduled: ScheduledScanResourceFace,
  ttlAfterFinishedSeconds: number,
) {
  const events = eventRecorder(cluster, clock, logger, { apiVersion: SCAN_API_VERSION, kind: SCAN_KIND });
  const cached = (namespace: string, name: string) => informer.cached(namespace, name) as ScanObject | undefined;
  const resources = new ScanCustomResources(
    cluster.kubeConfig,
    (scan) => scheduled.ownerReferenceFor(scan.scheduledBy!),
    (namespace, name) => cached(namespace, name)?.metadata?.uid,
  );
  resources.onRequest = (scanId) => budget.spend(scanId);
  const face = new ScanResourceFace({
    kubeConfig: cluster.kubeConfig,
    scanResources: resources,
    service: core.scans,
    marks: core.scanResourceMarks,
    cached,
    cachedAll: () => informer.list() as Iterable<ScanObject>,
    ttlAfterFinishedSeconds,
    historyLimitsOf: (scheduledScanId) => historyLimitsOf(core, scheduledScanId, scheduled.cachedObject),
    events,
    clock,
    budget,
  });
  const informer = customResourceInformer(cluster, SCAN_PLURAL, face, clock, logger);
  return { face, informer, resources, events };
}

/** The ScheduledScans' face: their CRs in the bound namespaces, read from its informer's cache. */
function scheduledScanFace(cluster: Cluster, core: Core, clock: Clock, logger: Logger) {
  const events = eventRecorder(cluster, clock, logger, { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND });
  const face = new ScheduledScanResourceFace({
    kubeConfig: cluster.kubeConfig,
    namespaceOf: (accountId) => core.accountRepository.findById(accountId)?.namespace,
    service: core.scheduledScans,
    repository: core.scheduledScanRepository,
    marks: core.scanResourceMarks,
    cached: (namespace, name) => informer.cached(namespace, name) as ScheduledScanObject | undefined,
    cachedAll: () => informer.list() as Iterable<ScheduledScanObject>,
    events,
    clock,
  });
  const informer = customResourceInformer(cluster, SCHEDULED_SCAN_PLURAL, face, clock, logger);
  return { face, informer, events };
}
