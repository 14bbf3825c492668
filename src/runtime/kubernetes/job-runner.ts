/**
 * The Kubernetes WorkloadRunner: a Scan's scanner runs as a Job in the
 * account's namespace (DESIGN.md). Start creates the upload-token Secret,
 * the inputs Secret and the Job, all owned by the Scan's CR; observe reads
 * the Job's conditions and, once it completed, the files its uploader sent;
 * stop deletes the Job with foreground propagation.
 */
import * as k8s from '@kubernetes/client-node';
import type { UploadsService } from '../../app/uploads-service.js';
import { LOGIN_FAILED_REASON, WorkloadRefusedError, type WorkloadInputs, type WorkloadRunner, type WorkloadStatus } from '../../app/ports.js';
import { loginFailureOf } from './login-step.js';
import type { ScanType } from '../../domain/risks/finding.js';
import { scannerFor } from '../../domain/scanners/index.js';
import type { ResolvedTarget, Scan } from '../../domain/scans/scan.js';
import { scannerTargets } from '../../domain/scans/resolve-targets.js';
import { apiServerMessageOf, createIdempotently, isForbidden, isNotFound } from './kube-errors.js';
import { buildScanInputsSecret, buildScanJob, buildScannerServiceAccount, buildUploadTokenSecret, scanJobName, uploadTokenSecretName, type ScanRef, type ScannerOptions } from './job-manifest.js';
import { namespaceNotWritableMessage } from './refusals.js';
import type { JobSettings } from './job-settings.js';
import type { ScanCustomResources } from './scan-resources.js';

export interface ScanLocation {
  name: string;
  namespace: string;
  type: ScanType;
}

export interface KubernetesJobRunnerOptions {
  kubeConfig: k8s.KubeConfig;
  scanResources: ScanCustomResources;
  uploads: UploadsService;
  jobSettings: JobSettings;
  /** The collector's internal upload base URL as seen from scanner pods. */
  uploadUrl: string;
  /** Where the Scan with this id lives: its object name, namespace (the account's) and type. */
  locate: (scanId: string) => ScanLocation | undefined;
  /** The service's VIGIL_ALLOW_TARGETS, passed to the login step of authenticated web scans. */
  allowTargets?: string;
}

type JobCondition = k8s.V1JobCondition;

export class KubernetesJobRunner implements WorkloadRunner {
  private readonly batch: k8s.BatchV1Api;
  private readonly core: k8s.CoreV1Api;
  private readonly listeners: Array<(scanId: string) => void> = [];

  constructor(private readonly options: KubernetesJobRunnerOptions) {
    this.batch = options.kubeConfig.makeApiClient(k8s.BatchV1Api);
    this.core = options.kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  onChange(listener: (scanId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Called by the Job informer (or a test) when a scanner Job changed. */
  jobChanged(scanId: string): void {
    for (const listener of this.listeners) listener(scanId);
  }

  /** A 403 becomes a refusal: the namespace is missing from the chart's tenants, which no retry fixes. */
  async start(scan: Scan, resolved: readonly ResolvedTarget[], inputs: WorkloadInputs = {}): Promise<void> {
    const location = this.mustLocate(scan.id);
    try {
      await this.startJob(scan, resolved, location, inputs);
    } catch (error) {
      if (!isForbidden(error)) throw error;
      throw new WorkloadRefusedError('NamespaceNotWritable', namespaceNotWritableMessage(location.namespace, apiServerMessageOf(error)));
    }
  }

  private async startJob(scan: Scan, resolved: readonly ResolvedTarget[], location: ScanLocation, workloadInputs: WorkloadInputs): Promise<void> {
    if (await this.readJob(location)) return; // already started: creation is idempotent
    await this.ensureScannerAccount(location.namespace);
    const owner = await this.options.scanResources.ensure(scan, location.namespace);
    const ref: ScanRef = { ...owner, type: scan.type, id: scan.id };
    await this.replaceTokenSecret(ref);
    const { targets, addresses } = scannerTargets(resolved);
    const scanner = scannerOptionsOf(workloadInputs);
    const inputs = buildScanInputsSecret({ scan: ref, targets, addresses, scanner });
    if (inputs !== undefined) await createIdempotently(() => this.core.createNamespacedSecret({ namespace: ref.namespace, body: inputs as k8s.V1Secret }));
    const job = buildScanJob({ scan: ref, targets, addresses, scanner, allowTargets: this.options.allowTargets ?? '', settings: this.options.jobSettings, uploadUrl: this.options.uploadUrl, uploadTokenSecretName: uploadTokenSecretName(ref.name) });
    await createIdempotently(() => this.batch.createNamespacedJob({ namespace: ref.namespace, body: job as k8s.V1Job }));
  }

  /**
   * Created on every start rather than remembered: one cheap request (409 when
   * it exists), and a ServiceAccount deleted by hand comes back with the next Scan.
   */
  private async ensureScannerAccount(namespace: string): Promise<void> {
    const account = buildScannerServiceAccount(namespace, this.options.jobSettings.serviceAccountName);
    await createIdempotently(() => this.core.createNamespacedServiceAccount({ namespace, body: account }));
  }

  /** The token Secret is immutable: a new token (a start after a crash) replaces it whole. */
  private async replaceTokenSecret(ref: ScanRef): Promise<void> {
    const secret = buildUploadTokenSecret(ref, this.options.uploads.issueToken(ref.id));
    try {
      await this.core.deleteNamespacedSecret({ namespace: ref.namespace, name: secret.metadata.name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    await this.core.createNamespacedSecret({ namespace: ref.namespace, body: secret as k8s.V1Secret });
  }

  async observe(scanId: string): Promise<WorkloadStatus> {
    const location = this.options.locate(scanId);
    const job = location && (await this.readJob(location));
    if (location === undefined || job === undefined) return { phase: 'Missing' };
    const conditions: JobCondition[] = job.status?.conditions ?? [];
    const failed = conditions.find((condition) => condition.type === 'Failed' && condition.status === 'True');
    if (failed !== undefined) return (await this.loginFailure(scanId, location)) ?? jobFailure(failed);
    if (conditions.some((condition) => condition.type === 'Complete' && condition.status === 'True')) return this.collect(scanId, location.type);
    return { phase: 'Running', progress: await this.progressFromLogs(scanId, location) };
  }

  /**
   * Progress from the scanner container's latest log lines (nmap --stats-every
   * and the like). Logs carry progress only, never results (DESIGN.md 1); a log
   * that cannot be read yet (pod pending) simply reports no progress.
   */
  private async progressFromLogs(scanId: string, location: ScanLocation): Promise<number | undefined> {
    try {
      const pods = await this.core.listNamespacedPod({ namespace: location.namespace, labelSelector: `vigil.dev/scan-id=${scanId}` });
      const pod = pods.items[0]?.metadata?.name;
      if (pod === undefined) return undefined;
      const log = await this.core.readNamespacedPodLog({ namespace: location.namespace, name: pod, container: 'scanner', tailLines: 50 });
      const definition = scannerFor(location.type);
      return String(log)
        .split('\n')
        .map((line) => definition.progressFrom(line))
        .filter((progress): progress is number => progress !== undefined)
        .at(-1);
    } catch {
      return undefined;
    }
  }

  /** A Job that failed in its login step: the login failed, not the scanner (login-step.ts). */
  private async loginFailure(scanId: string, location: ScanLocation): Promise<WorkloadStatus | undefined> {
    const pods = await this.core.listNamespacedPod({ namespace: location.namespace, labelSelector: `vigil.dev/scan-id=${scanId}` });
    const message = loginFailureOf(pods.items);
    return message === undefined ? undefined : { phase: 'Failed', reason: LOGIN_FAILED_REASON, message };
  }

  private async collect(scanId: string, type: ScanType): Promise<WorkloadStatus> {
    const staged = await this.options.uploads.staged(scanId, scannerFor(type).outputs);
    if ('missing' in staged) {
      return { phase: 'Failed', reason: 'OutputMissing', message: `the scanner Job completed but ${staged.missing} was never uploaded` };
    }
    const detail = imageContentOf(type, this.options.jobSettings);
    return { phase: 'Succeeded', outputs: staged.outputs, ...(detail === undefined ? {} : { detail }) };
  }

  async stop(scanId: string): Promise<void> {
    const location = this.options.locate(scanId);
    if (location === undefined) return;
    try {
      await this.batch.deleteNamespacedJob({ namespace: location.namespace, name: scanJobName(location.name), propagationPolicy: 'Foreground' });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async release(scanId: string): Promise<void> {
    await this.options.uploads.discard(scanId);
  }

  private async readJob(location: ScanLocation): Promise<k8s.V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob({ namespace: location.namespace, name: scanJobName(location.name) });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private mustLocate(scanId: string): ScanLocation {
    const location = this.options.locate(scanId);
    if (location === undefined) throw new Error(`scan ${scanId} has no location`);
    return location;
  }
}

/** The target's settings, API definition and login recording, as the Job's inputs carry them. */
function scannerOptionsOf(inputs: WorkloadInputs): ScannerOptions {
  return {
    ...(inputs.settings === undefined ? {} : { settings: inputs.settings }),
    ...(inputs.apiDefinition === undefined ? {} : { apiDefinition: inputs.apiDefinition }),
    ...(inputs.loginRecording === undefined ? {} : { loginRecording: inputs.loginRecording.content }),
  };
}

/** What the type's default image carries (nuclei's templates), unless the settings run another image. */
function imageContentOf(type: ScanType, settings: JobSettings): string | undefined {
  const content = scannerFor(type).imageContent;
  const override = settings.images[type];
  return content === undefined || (override !== undefined && override !== content.image) ? undefined : content.description;
}

/** Job failure reasons as the Scan's condition: the deadline gets its own reason, as in the embedded runtime. */
function jobFailure(condition: JobCondition): WorkloadStatus {
  const reason = condition.reason === 'DeadlineExceeded' ? 'DeadlineExceeded' : 'JobFailed';
  return { phase: 'Failed', reason, message: `the scanner Job failed (${condition.reason ?? 'no reason'}): ${condition.message ?? 'no message'}` };
}
