/**
 * The Kubernetes WorkloadRunner: a Scan's scanner runs as a Job in the
 * account's namespace (DESIGN.md). Start creates the Job, owned by the Scan's
 * CR, then the scan's one Secret (its upload token and its scanner inputs),
 * owned by the Job; observe reads
 * the Job and its pods from the JobObserver's informer caches (no request)
 * and, once the Job completed, the files its uploader sent; stop deletes the
 * Job with foreground propagation, and its Secret with it; release revokes
 * the upload token and deletes the Secret of a Job that stays (failed);
 * deleteCollectedWorkload deletes a Job whose results are recorded, and its
 * Secret with it (Jobs have no TTL: one finished while Vigil was away waits).
 */
import type * as k8s from './client-node.js';
import { KubeApi, kubePaths } from './kube-api.js';
import type { UploadsService } from '../../app/uploads-service.js';
import {
  LOGIN_FAILED_REASON,
  WorkloadRefusedError,
  type ReleasedWorkload,
  type WorkloadInputs,
  type WorkloadRunner,
  type WorkloadStatus,
} from '../../app/ports.js';
import { loginFailureOf } from './login-step.js';
import type { ScanType } from '../../domain/risks/finding.js';
import { scannerFor } from '../../domain/scanners/index.js';
import type { ResolvedTarget, Scan } from '../../domain/scans/scan.js';
import { scannerTargets } from '../../domain/scans/resolve-targets.js';
import { apiServerMessageOf, createIdempotently, isAlreadyExists, isForbidden, isNotFound } from './kube-errors.js';
import {
  buildScanJob,
  buildScanSecret,
  buildScannerServiceAccount,
  scanJobName,
  scanSecretName,
  type JobOwner,
  type ScanInputsInput,
  type ScanRef,
  type ScannerOptions,
} from './job-manifest.js';
import type { JobObserver } from './job-observer.js';
import { namespaceNotWritableMessage } from './refusals.js';
import type { JobSettings } from './job-settings.js';
import type { ScanCustomResources } from './scan-resources.js';
import { SCAN_ID_LABEL } from './reconciler-kit.js';
import { systemClock, type Clock } from '../../domain/clock.js';

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
  /** Job and pod caches; started and stopped by the runtime. */
  observer: JobObserver;
  /** The service's VIGIL_ALLOW_TARGETS, passed to the login step of authenticated web scans. */
  allowTargets?: string;
  /** Told of each request sent for a scan (its id), for its request budget (request-budget.ts). */
  onRequest?: (scanId: string) => void;
  /** Told when this process created the scan's Job (its request budget then covers the scan's life). */
  onJobCreated?: (scanId: string) => void;
  /** Told when the scan is released (it ended, or its row was deleted): its request count goes. */
  onReleased?: (scanId: string) => void;
  /** When a Job is created, for the uploader's deadline; the system clock unless a test moves it. */
  clock?: Clock;
}

export class KubernetesJobRunner implements WorkloadRunner {
  private readonly api: KubeApi;
  /** Namespaces whose scanner ServiceAccount this process created or found, or is creating: starts at once in a new namespace share one request. */
  private readonly accountsEnsured = new Map<string, Promise<void>>();

  constructor(private readonly options: KubernetesJobRunnerOptions) {
    this.api = new KubeApi(options.kubeConfig);
  }

  onChange(listener: (scanId: string) => void): void {
    this.options.observer.onChange(listener);
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

  /**
   * The Job first, then its Secret, owned by it (the uid comes back from the
   * create). A start repeated after a crash finds the Job (in the cache, or
   * as a 409 once the cache has it) and writes its Secret again: it may be
   * missing, or carry a token this start no longer honours.
   */
  private async startJob(scan: Scan, resolved: readonly ResolvedTarget[], location: ScanLocation, workloadInputs: WorkloadInputs): Promise<void> {
    const existing = this.cachedJob(location);
    if (existing === undefined) await this.ensureScannerAccount(location.namespace);
    // The CR was received (made, when it had none) earlier in this same reconcile of the Scan.
    const owner = this.options.scanResources.ownerFor(scan, location.namespace);
    const ref: ScanRef = { ...owner, type: scan.type, id: scan.id };
    const { targets, addresses } = scannerTargets(resolved, workloadInputs.settingsHostAddresses);
    const scanner = scannerOptionsOf(workloadInputs);
    const job = existing ?? (await this.createJob(ref, { scan: ref, targets, addresses, scanner }));
    await this.replaceSecret({ scan: ref, targets, addresses, scanner }, job);
    // No Event here: the Scan turns RUNNING with this start, and its Running Event names the Job (one Event, not two saying the same).
  }

  /** The scan's Job as the Job cache holds it, when it does (with its uid). */
  private cachedJob(location: ScanLocation): JobOwner | undefined {
    const metadata = this.options.observer.job(location.namespace, scanJobName(location.name))?.metadata;
    return metadata?.name === undefined || metadata.uid === undefined ? undefined : { name: metadata.name, uid: metadata.uid };
  }

  /**
   * One request. A 409 is a Job created before a restart that the cache has
   * not listed yet: its uid comes from the cache, so the start is retried
   * (the Scan stays QUEUED) until the cache holds it.
   */
  private async createJob(ref: ScanRef, input: ScanInputsInput): Promise<JobOwner> {
    const job = buildScanJob({
      ...input,
      allowTargets: this.options.allowTargets ?? '',
      settings: this.options.jobSettings,
      uploadUrl: this.options.uploadUrl,
      uploadTokenSecretName: scanSecretName(ref.name),
      createdAt: (this.options.clock ?? systemClock).now(),
    });
    this.spent(ref.id);
    let created: k8s.V1Job;
    try {
      created = await this.api.create<k8s.V1Job>(kubePaths.namespaced('batch', 'v1', ref.namespace, 'jobs'), job);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const cached = this.cachedJob({ name: ref.name, namespace: ref.namespace, type: ref.type });
      if (cached === undefined)
        throw new Error(`the Job ${job.metadata.name} exists but is not in the Job cache yet; the start is tried again`, { cause: error });
      return cached;
    }
    this.options.observer.remember(created);
    this.options.onJobCreated?.(ref.id);
    return { name: job.metadata.name, uid: created.metadata!.uid! };
  }

  /**
   * Created once per namespace and process (409 when it exists). One deleted
   * by hand fails the next Scan there as ServiceAccountMissing (the Job's
   * FailedCreate event), which makes the following start create it again.
   */
  private ensureScannerAccount(namespace: string): Promise<void> {
    let ensured = this.accountsEnsured.get(namespace);
    if (ensured === undefined) {
      const account = buildScannerServiceAccount(namespace, this.options.jobSettings.serviceAccountName);
      ensured = createIdempotently(() => this.api.create(kubePaths.core(namespace, 'serviceaccounts'), account));
      this.accountsEnsured.set(namespace, ensured);
      // A failed creation is tried again by the next start.
      ensured.catch(() => {
        if (this.accountsEnsured.get(namespace) === ensured) this.accountsEnsured.delete(namespace);
      });
    }
    return ensured;
  }

  /**
   * The scan's one Secret (its token and its inputs) is immutable: a new
   * token (a start repeated after a crash) replaces it whole; a first start
   * costs one request.
   */
  private async replaceSecret(input: ScanInputsInput, job: JobOwner): Promise<void> {
    const { scan } = input;
    const secret = buildScanSecret(input, this.options.uploads.issueToken(scan.id), job);
    try {
      this.spent(scan.id);
      await this.api.create(kubePaths.core(scan.namespace, 'secrets'), secret);
      return;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    try {
      this.spent(scan.id);
      await this.api.delete(kubePaths.core(scan.namespace, 'secrets', secret.metadata.name));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.spent(scan.id);
    await this.api.create(kubePaths.core(scan.namespace, 'secrets'), secret);
  }

  private spent(scanId: string): void {
    this.options.onRequest?.(scanId);
  }

  /** From the caches only: a running scan costs no request (issue 13). */
  async observe(scanId: string): Promise<WorkloadStatus> {
    const location = this.options.locate(scanId);
    const observer = this.options.observer;
    const job = location && observer.job(location.namespace, scanJobName(location.name));
    // Until the cache holds a first list, a Job not in it may exist: wait for the list's change notices.
    if (job === undefined && location !== undefined && !observer.synced(location.namespace)) return { phase: 'Running' };
    if (location === undefined || job === undefined) return { phase: 'Missing' };
    const health = await observer.health(scanId, job);
    switch (health.phase) {
      case 'Failed': {
        // A Job that failed in its login step: the login failed, not the scanner (login-step.ts).
        const login = loginFailureOf(observer.podsOf(scanId));
        if (login !== undefined) return { phase: 'Failed', reason: LOGIN_FAILED_REASON, message: login };
        if (health.reason === 'ServiceAccountMissing') this.accountsEnsured.delete(location.namespace);
        return { phase: 'Failed', reason: health.reason, message: health.message };
      }
      case 'Complete':
        return this.collect(scanId, location.type);
      case 'Running': {
        const progress = observer.progress(scanId);
        return {
          phase: 'Running',
          ...(progress === undefined ? {} : { progress }),
          ...(health.recheckAfterMs === undefined ? {} : { recheckAfterMs: health.recheckAfterMs }),
        };
      }
    }
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
      await this.api.delete(kubePaths.namespaced('batch', 'v1', location.namespace, 'jobs', scanJobName(location.name)), { propagationPolicy: 'Foreground' });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * The scan's results are recorded: its Job, pod and Secret go (background
   * propagation: nothing waits for the pod; the Secret is the Job's). Jobs
   * carry no TTL, so that one which finished while Vigil was away is still
   * there to collect; this is the deletion the TTL did. Called after release:
   * not counted against the scan's budget (its count is dropped), this
   * request was reserved (REQUESTS_AT_END). A Job this misses goes with its
   * Scan's resource, its owner.
   */
  async deleteCollectedWorkload(scanId: string): Promise<void> {
    const location = this.options.locate(scanId);
    if (location === undefined) return;
    try {
      await this.api.delete(kubePaths.namespaced('batch', 'v1', location.namespace, 'jobs', scanJobName(location.name)), { propagationPolicy: 'Background' });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * The scan ended: its token is revoked and its staged files removed. The
   * Secret (the token, the inputs: cookies, login recordings) of a Job that
   * stays (failed, or missing) is deleted rather than left until the Scan's
   * CR is; a Job that goes (`deleted`: stopped, or collected next) takes its
   * Secret with it, at no request of its own.
   */
  async release(scanId: string, workload: ReleasedWorkload): Promise<void> {
    this.options.observer.forget(scanId);
    this.options.onReleased?.(scanId);
    await this.options.uploads.discard(scanId);
    const location = this.options.locate(scanId);
    if (location === undefined || workload === 'deleted') return;
    // One request (the scan's Secret carries its id label; so did the token and inputs Secrets of earlier versions).
    // Not counted against the scan's budget: its count was dropped when it ended, and this deletion was reserved (request-budget.ts).
    await this.api.delete(kubePaths.core(location.namespace, 'secrets'), { labelSelector: `${SCAN_ID_LABEL}=${scanId}` });
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
