/**
 * The composition root's Kubernetes half (VIGIL_RUNTIME=kubernetes): Scan
 * CRs mirror every Scan, scanners run as Jobs in each account's namespace,
 * informers on Vigil's Jobs and pods tell the controller every change (no
 * polling), and an informer on Scan
 * CRs starts Scans applied with kubectl. ScheduledScan CRs mirror every
 * ScheduledScan the same way, and an informer on them turns ScheduledScans
 * applied, edited or deleted with kubectl into rows.
 */
import * as k8s from '@kubernetes/client-node';
import type { ScanRepository, ScheduledScanRepository } from '../app/ports.js';
import { systemTimers } from '../app/controller/timer.js';
import type { Clock } from '../domain/clock.js';
import { VIGIL_VERSION } from '../domain/scanners/index.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION } from '../domain/scans/scan-resource.js';
import { SCHEDULED_SCAN_PLURAL } from '../domain/schedules/scheduled-scan-resource.js';
import { AppliedScheduledScans } from '../runtime/kubernetes/applied-scheduled-scans.js';
import { MirroredScheduledScanRepository, ScheduledScanMirror, type ScheduledScanObject } from '../runtime/kubernetes/scheduled-scan-mirror.js';
import type { Logger } from '../observability/logger.js';
import { AppliedScanAdopter } from '../runtime/kubernetes/applied-scans.js';
import { KubernetesJobRunner, type ScanLocation } from '../runtime/kubernetes/job-runner.js';
import { JobObserver } from '../runtime/kubernetes/job-observer.js';
import { checkJobSettings, defaultJobSettings, jobSettingsFrom, type JobSettings } from '../runtime/kubernetes/job-settings.js';
import { readFileSync } from 'node:fs';
import { SettingsError, type Settings } from '../config/settings.js';
import { RestartingInformer } from '../runtime/kubernetes/restarting-informer.js';
import { ScanCustomResources } from '../runtime/kubernetes/scan-resources.js';
import { MirroredScanRepository, ScanStatusMirror } from '../runtime/kubernetes/scan-status-mirror.js';
import type { Core, WorkloadRuntime } from './composition-root.js';

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

/** Built before the store's services: the repositories they use tell the mirrors about every Scan and ScheduledScan written. */
export function clusterMirror(given: k8s.KubeConfig | undefined, logger: Logger, core: () => Core, clock: Clock) {
  const kubeConfig = given ?? loadDefaultKubeConfig();
  const scheduledScanMirror = new ScheduledScanMirror({
    kubeConfig,
    read: (id) => core().scheduledScanRepository.findByIdUnscoped(id),
    namespaceOf: (accountId) => core().accountRepository.findById(accountId)?.namespace,
    clock,
    timers: systemTimers(clock),
    onError: (id, error) => logger.warn({ scheduled_scan_id: id, err: error }, 'scheduled scan not written to its custom resource; will retry'),
  });
  const scanResources = new ScanCustomResources(kubeConfig, (scan) => scheduledScanMirror.ownerReferenceFor(scan.scheduledBy!));
  const mirror = new ScanStatusMirror({
    kubeConfig,
    scanResources,
    locate: locator(core),
    onError: (scanId, error) => logger.warn({ scan_id: scanId, err: error }, 'scan status not written to its custom resource'),
  });
  return {
    kubeConfig,
    scanResources,
    mirror,
    scheduledScanMirror,
    wrapScans: (repository: ScanRepository) => new MirroredScanRepository(repository, mirror),
    wrapScheduledScans: (repository: ScheduledScanRepository) => new MirroredScheduledScanRepository(repository, scheduledScanMirror),
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
  const observer = new JobObserver({
    kubeConfig: cluster.kubeConfig,
    timers: systemTimers(clock),
    onError: (what, error) => logger.warn({ err: error }, what),
  });
  const runner = new KubernetesJobRunner({
    observer,
    kubeConfig: cluster.kubeConfig,
    scanResources: cluster.scanResources,
    uploads: core.uploads,
    jobSettings: jobSettings(settings.jobSettingsFile),
    uploadUrl: settings.uploadUrl,
    locate: locator(() => core),
  });
  const scheduled = appliedScheduledScans(cluster, core, clock, logger);
  const informers = [observer, appliedScansInformer(cluster.kubeConfig, core, clock, logger), scheduled.informer];
  return {
    runner,
    // The observer's informers tell every change of a Job or pod: no poll.
    pollMs: null,
    start: async () => {
      scheduled.reconciler.start();
      for (const informer of informers) await informer.start();
    },
    // Jobs outlive the service by design: the next process finds them again.
    stop: async () => {
      for (const informer of informers) await informer.stop();
      await scheduled.reconciler.stop();
      cluster.scheduledScanMirror.stop();
      await Promise.all([cluster.mirror.flush(), cluster.scheduledScanMirror.flush()]);
    },
  };
}

/** An informer on one kind of Vigil's custom resources in every namespace, restarted with backoff when its watch breaks. */
function customResourceInformer(kubeConfig: k8s.KubeConfig, plural: string, onObject: (event: 'add' | 'update' | 'delete', object: k8s.KubernetesObject) => void, clock: Clock, logger: Logger) {
  const customObjects = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const singular = plural.replace(/s$/, '');
  return new RestartingInformer<k8s.KubernetesObject>({
    kubeConfig,
    path: `/apis/${SCAN_GROUP}/${SCAN_VERSION}/${plural}`,
    list: async () => (await customObjects.listClusterCustomObject({ group: SCAN_GROUP, version: SCAN_VERSION, plural })) as k8s.KubernetesListObject<k8s.KubernetesObject>,
    onObject,
    onError: (error, restartInMs) => logger.warn({ err: error, restart_in_ms: restartInMs }, `${singular} informer stopped; restarting`),
    timers: systemTimers(clock),
  });
}

/** Watches Scan CRs in every namespace so that Scans applied with kubectl are started for their namespace's account. */
function appliedScansInformer(kubeConfig: k8s.KubeConfig, core: Core, clock: Clock, logger: Logger) {
  const adopter = new AppliedScanAdopter({ kubeConfig, accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace), scans: core.scans, clock });
  const onObject = (event: 'add' | 'update' | 'delete', object: k8s.KubernetesObject) => {
    if (event === 'delete') return;
    adopter.handle(object).catch((error: unknown) => logger.warn({ name: object.metadata?.name, namespace: object.metadata?.namespace, err: error }, 'applied scan not handled'));
  };
  return customResourceInformer(kubeConfig, SCAN_PLURAL, onObject, clock, logger);
}

/** Watches ScheduledScan CRs in every namespace; every event enqueues its key, and a reconcile converges the row on the CR. */
function appliedScheduledScans(cluster: ClusterMirror, core: Core, clock: Clock, logger: Logger) {
  const reconciler: AppliedScheduledScans = new AppliedScheduledScans({
    kubeConfig: cluster.kubeConfig,
    accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace),
    service: core.scheduledScans,
    repository: core.scheduledScanRepository,
    mirror: cluster.scheduledScanMirror,
    cached: (namespace, name) => informer.cached(namespace, name) as ScheduledScanObject | undefined,
    clock,
    timers: systemTimers(clock),
    onError: (key, error) => logger.warn({ key, err: error }, 'applied scheduled scan not reconciled; will retry'),
  });
  const informer = customResourceInformer(cluster.kubeConfig, SCHEDULED_SCAN_PLURAL, (_event, object) => reconciler.enqueue(object), clock, logger);
  return { reconciler, informer };
}
