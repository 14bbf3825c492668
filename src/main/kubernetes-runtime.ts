/**
 * The composition root's Kubernetes half (VIGIL_RUNTIME=kubernetes): Scan
 * CRs mirror every Scan, scanners run as Jobs in each account's namespace,
 * informers on Vigil's Jobs and pods tell the controller every change (no
 * polling), and one reconciler per Kind keeps each Scan and ScheduledScan
 * row and its custom resource in step (the row is the record; the CR's spec
 * an input, its status a projection), reading the CRs from informer caches.
 */
import * as k8s from '../runtime/kubernetes/client-node.js';
import { customResourceInformer as informerOnCustomResources } from '../runtime/kubernetes/custom-resource-informer.js';
import type { ScanRepository, ScheduledScan, ScheduledScanRepository } from '../app/ports.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import { systemTimers } from '../app/controller/timer.js';
import type { Clock } from '../domain/clock.js';
import { VIGIL_VERSION } from '../domain/scanners/index.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION } from '../domain/scans/scan-resource.js';
import { SCANS_HISTORY_LIMITS, SCHEDULED_SCAN_API_VERSION, SCHEDULED_SCAN_KIND, SCHEDULED_SCAN_PLURAL } from '../domain/schedules/scheduled-scan-resource.js';
import {
  NotifyingScheduledScanRepository,
  ScheduledScanReconciler,
  scheduledScanKey,
  type ScheduledScanObject,
} from '../runtime/kubernetes/scheduled-scan-reconciler.js';
import type { OwnerReference } from '../runtime/kubernetes/job-manifest.js';
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
import { NotifyingScanRepository } from '../runtime/kubernetes/scan-writes.js';
import { ScanReconciler, scanKey, type HistoryLimits, type ScanObject } from '../runtime/kubernetes/scan-reconciler.js';
import { KubernetesEventRecorder } from '../runtime/kubernetes/event-recorder.js';
import { ControllerLoop } from '../app/controller/controller-loop.js';
import { SCAN_API_VERSION, SCAN_KIND } from '../domain/scans/scan-resource.js';
import { SCAN_STATES, type Scan } from '../domain/scans/scan.js';
import type { Core, WorkloadRuntime } from './composition-root.js';
import { shareAgents } from '../runtime/kubernetes/shared-agent.js';
import { NamespaceSet } from '../runtime/kubernetes/namespace-set.js';
import { dataVersion } from '../store/database.js';

/** The scans holding or waiting for a slot: a Scan applied when these (itself included) are within the limit starts at once. */
const ACTIVE_SCAN_STATES = ['QUEUED', 'RUNNING', 'STOPPING'] as const;

export type ClusterMirror = ReturnType<typeof clusterMirror>;

/** Where a Scan lives in the cluster: its object name and its account's namespace. */
function locator(core: () => Core) {
  return (scanId: string): ScanLocation | undefined => {
    const scan = core().scanRepository.findByIdUnscoped(scanId);
    const account = scan && core().accountRepository.findById(scan.accountId);
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
function boundNamespaces(core: () => Core, clock: Clock, logger: Logger): NamespaceSet {
  return new NamespaceSet({
    read: () => core().accountRepository.list().map((account) => account.namespace),
    version: () => `${dataVersion(core().db)}/${core().accountRepository.count()}`,
    timers: systemTimers(clock),
    onError: (error) => logger.warn({ err: error }, 'accounts not re-read for new namespaces; will retry'),
  });
}

/** Built before the store's services: the repositories they use tell the reconcilers about every Scan and ScheduledScan written. */
export function clusterMirror(given: k8s.KubeConfig | undefined, logger: Logger, core: () => Core, clock: Clock, metrics?: Metrics) {
  const kubeConfig = given ?? loadDefaultKubeConfig();
  shareAgents(kubeConfig); // one keep-alive Agent for every request, not one per request (shared-agent.ts)
  if (metrics !== undefined) observeKubeRequests(kubeConfig, (verb, code) => metrics.kubernetesRequests.inc({ verb, code: String(code) }));
  const namespaces = boundNamespaces(core, clock, logger);
  const scheduledEvents = new KubernetesEventRecorder({
    kubeConfig,
    timers: systemTimers(clock),
    defaults: { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND },
    onError: (error) => logger.warn({ err: error }, 'kubernetes event not recorded'),
  });
  /** The ScheduledScan reconciler once the runtime made it: the owner of a run's Scans, and where a written row's key goes. */
  const scheduledScans: {
    ownerReferenceFor: (id: string) => Promise<OwnerReference | undefined>;
    rowChanged: (key: string, spec: boolean) => void;
  } = { ownerReferenceFor: async () => undefined, rowChanged: () => undefined };
  const scanResources = new ScanCustomResources(kubeConfig, (scan) => scheduledScans.ownerReferenceFor(scan.scheduledBy!));
  /** Where a written Scan's key goes: the Scan reconciler's queue once the runtime made it (its start lists every key anyway). */
  const scanKeys: { enqueue: (key: string) => void } = { enqueue: () => undefined };
  const scanWritten = (scan: Scan) => {
    const namespace = core().accountRepository.findById(scan.accountId)?.namespace;
    if (namespace !== undefined) scanKeys.enqueue(scanKey(namespace, scan.name));
  };
  const scheduledScanWritten = (row: ScheduledScan, spec: boolean) => {
    const namespace = core().accountRepository.findById(row.accountId)?.namespace;
    if (namespace !== undefined) scheduledScans.rowChanged(scheduledScanKey(namespace, row.objectName), spec);
  };
  return {
    kubeConfig,
    namespaces,
    scanResources,
    scanKeys,
    scheduledScans,
    scheduledEvents,
    metrics,
    wrapScans: (repository: ScanRepository) => new NotifyingScanRepository(repository, scanWritten),
    wrapScheduledScans: (repository: ScheduledScanRepository) => new NotifyingScheduledScanRepository(repository, scheduledScanWritten),
  };
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

export function kubernetesRuntime(settings: Settings, core: Core, cluster: ClusterMirror, clock: Clock, logger: Logger): WorkloadRuntime {
  // Each scan's requests, counted where they are sent (request-budget.ts): progress is written on its own only within the budget.
  const budget = new ScanRequestBudget();
  const spend = (scanId: string) => budget.spend(scanId);
  cluster.scanResources.onRequest = spend;
  const observer = new JobObserver({
    kubeConfig: cluster.kubeConfig,
    namespaces: cluster.namespaces,
    timers: systemTimers(clock),
    onError: (what, error) => logger.warn({ err: error }, what),
    onInformerRestart: (resource) => cluster.metrics?.informerRestarts.inc({ resource }),
    onRequest: spend,
  });
  const events = new KubernetesEventRecorder({
    kubeConfig: cluster.kubeConfig,
    timers: systemTimers(clock),
    defaults: { apiVersion: SCAN_API_VERSION, kind: SCAN_KIND },
    onError: (error) => logger.warn({ err: error }, 'kubernetes event not recorded'),
  });
  const startsAtOnce = () => ACTIVE_SCAN_STATES.reduce((total, state) => total + core.scanRepository.countInState(state), 0) <= settings.maxConcurrentScans;
  const scheduled = scheduledScanReconciler(cluster, core, clock, logger);
  const lifetime: ScanLifetime = {
    ttlAfterFinishedSeconds: settings.scanTtlAfterFinishedSeconds,
    historyLimitsOf: (scheduledScanId) => historyLimitsOf(core, scheduledScanId, (namespace, name) => scheduled.informer.cached(namespace, name) as ScheduledScanObject | undefined),
  };
  const scans = scanReconciler(cluster, core, events, clock, logger, (scanId) => runner.isStarting(scanId), budget, startsAtOnce, lifetime);
  const runner = new KubernetesJobRunner({
    observer,
    cachedScanUid: (namespace, name) => scans.informer.cached(namespace, name)?.metadata?.uid,
    kubeConfig: cluster.kubeConfig,
    scanResources: cluster.scanResources,
    uploads: core.uploads,
    jobSettings: jobSettings(settings.jobSettingsFile),
    uploadUrl: settings.uploadUrl,
    locate: locator(() => core),
    allowTargets: settings.allowTargets.map((cidr) => cidr.text).join(','),
    onStartFailed: (location) => cluster.scanKeys.enqueue(scanKey(location.namespace, location.name)),
    onRequest: spend,
    onJobCreated: (scanId) => budget.started(scanId),
    onReleased: (scanId) => budget.drop(scanId),
    clock,
  });
  cluster.metrics?.watchQueue('scan-resource', scans.loop.queue);
  cluster.metrics?.watchQueue('scheduled-scan-resource', scheduled.loop.queue);
  const informers = [observer, scans.informer, scheduled.informer];
  return {
    runner,
    // The observer's informers tell every change of a Job or pod: no poll.
    pollMs: null,
    start: async () => {
      cluster.namespaces.start();
      for (const informer of informers) await informer.start();
      cluster.scheduledScans.ownerReferenceFor = (id) => scheduled.reconciler.ownerReferenceFor(id);
      cluster.scheduledScans.rowChanged = (key, spec) => {
        scheduled.reconciler.rowChanged(key, spec);
        scheduled.loop.enqueue(key);
      };
      scheduled.loop.start();
      cluster.scanKeys.enqueue = (key) => scans.loop.enqueue(key);
      scans.loop.start();
    },
    // Jobs outlive the service by design: the next process finds them again.
    stop: async () => {
      cluster.namespaces.stop();
      for (const informer of informers) await informer.stop();
      await scans.loop.stop();
      await scheduled.loop.stop();
      await Promise.all([events.flush(), cluster.scheduledEvents.flush()]);
    },
  };
}

/** How long a finished Scan's CR stays: the install's TTL, and the history limits of the schedule that ran it. */
interface ScanLifetime {
  ttlAfterFinishedSeconds: number;
  historyLimitsOf: (scheduledScanId: string) => HistoryLimits;
}

/** A ScheduledScan's history limits, from its CR's spec as the informer holds it; the defaults where it says nothing. */
function historyLimitsOf(core: Core, scheduledScanId: string, cached: (namespace: string, name: string) => ScheduledScanObject | undefined): HistoryLimits {
  const row = core.scheduledScanRepository.findByIdUnscoped(scheduledScanId);
  const namespace = row && core.accountRepository.findById(row.accountId)?.namespace;
  const spec = (row && namespace !== undefined ? cached(namespace, row.objectName)?.spec : undefined) as { successfulScansHistoryLimit?: unknown; failedScansHistoryLimit?: unknown } | undefined;
  const limit = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback);
  return { successful: limit(spec?.successfulScansHistoryLimit, SCANS_HISTORY_LIMITS.successful), failed: limit(spec?.failedScansHistoryLimit, SCANS_HISTORY_LIMITS.failed) };
}

/** An informer on one kind of Vigil's custom resources in the namespaces bound to accounts (custom-resource-informer.ts), its failures logged. */
function customResourceInformer(
  { kubeConfig, namespaces, metrics }: Pick<ClusterMirror, 'kubeConfig' | 'namespaces' | 'metrics'>,
  plural: string,
  onObject: (event: 'add' | 'update' | 'delete', object: k8s.KubernetesObject) => void,
  clock: Clock,
  logger: Logger,
  onListed?: () => void,
) {
  const singular = plural.replace(/s$/, '');
  return informerOnCustomResources({
    kubeConfig,
    namespaces,
    group: SCAN_GROUP,
    version: SCAN_VERSION,
    plural,
    onObject,
    ...(onListed === undefined ? {} : { onListed }),
    onError: (error, restartInMs) => {
      metrics?.informerRestarts.inc({ resource: plural });
      logger.warn({ err: error, restart_in_ms: restartInMs }, `${singular} informer stopped; restarting`);
    },
    timers: systemTimers(clock),
  });
}

/**
 * The Scan reconciler, its informer on Scan CRs in every namespace and its
 * loop: informer events and row writes enqueue keys; every full list of the
 * informer (start, restart) is a resync of every CR and every row.
 */
function scanReconciler(
  cluster: ClusterMirror,
  core: Core,
  events: KubernetesEventRecorder,
  clock: Clock,
  logger: Logger,
  starting: (scanId: string) => boolean,
  budget: ScanRequestBudget,
  startsAtOnce: () => boolean,
  { ttlAfterFinishedSeconds, historyLimitsOf }: ScanLifetime,
) {
  const reconciler = new ScanReconciler({
    kubeConfig: cluster.kubeConfig,
    scanResources: cluster.scanResources,
    accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace),
    service: core.scans,
    repository: core.scanRepository,
    marks: core.scanResourceMarks,
    cached: (namespace, name) => informer.cached(namespace, name) as ScanObject | undefined,
    ttlAfterFinishedSeconds,
    historyLimitsOf,
    events,
    clock,
    starting,
    budget,
    startsAtOnce,
  });
  const rowKeys = function* (): Iterable<string> {
    for (const id of core.scanRepository.idsInStates(SCAN_STATES)) {
      const scan = core.scanRepository.findByIdUnscoped(id);
      const namespace = scan && core.accountRepository.findById(scan.accountId)?.namespace;
      if (scan !== undefined && namespace !== undefined) yield scanKey(namespace, scan.name);
    }
  };
  const loop = new ControllerLoop({
    timers: systemTimers(clock),
    reconcile: (key) => reconciler.reconcile(key),
    listKeys: function* () {
      for (const object of informer.list()) yield scanKey(object.metadata!.namespace!, object.metadata!.name!);
      yield* rowKeys();
    },
    onError: (key, error) => logger.warn({ key, err: error }, 'scan custom resource not reconciled; will retry'),
    workers: 4,
    ...(cluster.metrics === undefined ? {} : { observer: cluster.metrics.queueObserver('scan-resource') }),
  });
  const informer = customResourceInformer(cluster, SCAN_PLURAL, (_event, object) => loop.enqueue(scanKey(object.metadata!.namespace!, object.metadata!.name!)), clock, logger, () => loop.resync());
  return { reconciler, loop, informer };
}

/**
 * The ScheduledScan reconciler, its informer on ScheduledScan CRs in every
 * namespace and its loop, as for Scans: informer events and row writes
 * enqueue keys; every full list of the informer (start, restart) is a pass
 * over every CR and every row.
 */
function scheduledScanReconciler(cluster: ClusterMirror, core: Core, clock: Clock, logger: Logger) {
  const reconciler = new ScheduledScanReconciler({
    kubeConfig: cluster.kubeConfig,
    accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace),
    namespaceOf: (accountId) => core.accountRepository.findById(accountId)?.namespace,
    service: core.scheduledScans,
    repository: core.scheduledScanRepository,
    marks: core.scanResourceMarks,
    cached: (namespace, name) => informer.cached(namespace, name) as ScheduledScanObject | undefined,
    events: cluster.scheduledEvents,
    clock,
  });
  const rowKeys = function* (): Iterable<string> {
    for (const account of core.accountRepository.list()) {
      let after: CursorValue[] | undefined;
      do {
        const page = core.scheduledScanRepository.list(account.id, 500, after);
        for (const row of page.items) yield scheduledScanKey(account.namespace, row.objectName);
        after = page.nextCursor;
      } while (after !== undefined);
    }
  };
  const loop = new ControllerLoop({
    timers: systemTimers(clock),
    reconcile: (key) => reconciler.reconcile(key),
    listKeys: function* () {
      for (const object of informer.list()) yield scheduledScanKey(object.metadata!.namespace!, object.metadata!.name!);
      yield* rowKeys();
    },
    onError: (key, error) => logger.warn({ key, err: error }, 'scheduled scan custom resource not reconciled; will retry'),
    workers: 2,
    ...(cluster.metrics === undefined ? {} : { observer: cluster.metrics.queueObserver('scheduled-scan-resource') }),
  });
  const informer = customResourceInformer(
    cluster,
    SCHEDULED_SCAN_PLURAL,
    (_event, object) => loop.enqueue(scheduledScanKey(object.metadata!.namespace!, object.metadata!.name!)),
    clock,
    logger,
    () => loop.resync(),
  );
  return { reconciler, loop, informer };
}
