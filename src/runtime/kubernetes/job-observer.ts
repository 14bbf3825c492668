/**
 * The Job-side observer (issue 13): everything the Scan controller needs to
 * know about scanner Jobs, from informer caches on Vigil's Jobs and pods
 * (label-selected to `app.kubernetes.io/managed-by=vigil`) in each namespace
 * bound to an account and nowhere else (namespaced-informer.ts), never from
 * periodic requests. A running scan costs one followed log stream (its
 * progress) and no request between its changes; every change of its Job or
 * pods, and every new progress figure, is told to the controller at once.
 *
 * The one request outside a watch is on the failure path only: a Job that
 * has had no pod for NO_POD_GRACE_MS has its events read, at most twice, for
 * the API server's reason (a missing ServiceAccount, a quota).
 */
import { Writable } from 'node:stream';
import * as k8s from './client-node.js';
import { KubeApi, kubePaths } from './kube-api.js';
import type { Timers } from '../../app/controller/timer.js';
import type { ScanType } from '../../domain/risks/finding.js';
import { scannerFor } from '../../domain/scanners/index.js';
import { LogFollower, type FollowedLog } from './log-follower.js';
import type { NamespaceSet } from './namespace-set.js';
import { NamespacedInformer } from './namespaced-informer.js';
import { jobHealth, NO_POD_GRACE_MS, type JobHealth } from './workload-health.js';
import { MANAGED_BY_VIGIL, SCAN_ID_LABEL } from './reconciler-kit.js';

export { MANAGED_BY_VIGIL };
const SCAN_TYPE_LABEL = 'vigil.dev/scan-type';
/** A log line longer than this is not a progress line; the rest of it is dropped (bounded memory per stream). */
const MAX_LOG_LINE = 4096;
/** Reads of a pod-less Job's events: at the grace, and once more a minute later. */
const MAX_EVENT_READS = 2;

export interface JobObserverOptions {
  kubeConfig: k8s.KubeConfig;
  /** Where Jobs and pods are watched: the namespaces bound to accounts. */
  namespaces: NamespaceSet;
  timers: Timers;
  onError: (what: string, error: unknown) => void;
  /** An informer of this observer stopped on an error and restarts (metrics). */
  onInformerRestart?: (resource: 'jobs' | 'pods') => void;
  /** Follow the scanner container's log for progress (one stream per running pod). */
  followLogs?: boolean;
  /** Told of each request sent for a scan (its id): the log follow, the reads of a pod-less Job's events (request-budget.ts). */
  onRequest?: (scanId: string) => void;
}

/** A pod's followed log: connecting (no stream yet) or flowing; `stopped` once it is no longer wanted. */
interface Following {
  stream?: FollowedLog;
  stopped: boolean;
}

interface ScanWatch {
  /** When a problem (by key) was first seen, so grace periods survive re-reads. */
  firstSeen: Map<string, number>;
  progress?: number;
  failedCreate?: string;
  eventReads: number;
  nextEventReadAt?: number;
}

export class JobObserver {
  private readonly jobs: NamespacedInformer<k8s.V1Job>;
  private readonly pods: NamespacedInformer<k8s.V1Pod>;
  private readonly api: KubeApi;
  private readonly logs: LogFollower;
  private readonly listeners: Array<(scanId: string) => void> = [];
  /** Jobs this process created that the cache has not shown yet (a watch event is a moment behind the create). */
  private readonly created = new Map<string, k8s.V1Job>();
  private readonly podsByScan = new Map<string, Map<string, k8s.V1Pod>>();
  private readonly watches = new Map<string, ScanWatch>();
  /**
   * Pods whose scanner log is followed (or was: one stream per pod for its
   * life; the value goes once it is stopped, the key stays until the pod is
   * deleted). A stream that connects after it was stopped (the scan ended,
   * or its pod was deleted, while the request was on its way) is closed at
   * once.
   */
  private readonly followed = new Map<string, Following | undefined>();

  constructor(private readonly options: JobObserverOptions) {
    this.api = new KubeApi(options.kubeConfig);
    this.logs = new LogFollower(options.kubeConfig);
    this.jobs = new NamespacedInformer<k8s.V1Job>({
      kubeConfig: options.kubeConfig,
      namespaces: options.namespaces,
      pathIn: (namespace) => kubePaths.namespaced('batch', 'v1', namespace, 'jobs'),
      labelSelector: MANAGED_BY_VIGIL,
      trim: trimCached,
      onObject: (_event, job) => this.jobChanged(job),
      onListed: (jobs) => jobs.forEach((job) => this.jobChanged(job)),
      onError: (error) => {
        options.onInformerRestart?.('jobs');
        options.onError('job informer stopped; restarting', error);
      },
      timers: options.timers,
    });
    this.pods = new NamespacedInformer<k8s.V1Pod>({
      kubeConfig: options.kubeConfig,
      namespaces: options.namespaces,
      pathIn: (namespace) => kubePaths.core(namespace, 'pods'),
      labelSelector: MANAGED_BY_VIGIL,
      trim: trimCached,
      onObject: (event, pod) => this.podChanged(event, pod),
      onListed: (pods, namespace) => this.podsListed(pods, namespace),
      onError: (error) => {
        options.onInformerRestart?.('pods');
        options.onError('pod informer stopped; restarting', error);
      },
      timers: options.timers,
    });
  }

  onChange(listener: (scanId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves once both caches hold a first list (or their first attempt failed; they keep retrying). */
  async start(): Promise<void> {
    await Promise.all([this.jobs.start(), this.pods.start()]);
  }

  async stop(): Promise<void> {
    for (const key of this.followed.keys()) this.stopFollowing(key);
    this.followed.clear();
    await Promise.all([this.jobs.stop(), this.pods.stop()]);
  }

  /** Until the namespace's Job cache holds a full list, a Job missing from it may still exist. */
  synced(namespace: string): boolean {
    return this.jobs.syncedIn(namespace);
  }

  /** A Job this process just created: shown until the informer sees it. */
  remember(job: k8s.V1Job): void {
    trimCached(job);
    this.created.set(`${job.metadata?.namespace}/${job.metadata?.name}`, job);
  }

  job(namespace: string, name: string): k8s.V1Job | undefined {
    return this.jobs.cached(namespace, name) ?? this.created.get(`${namespace}/${name}`);
  }

  /**
   * The Job's health from the caches; on the failure path only, one read of
   * its events when it has had no pod past the grace.
   */
  async health(scanId: string, job: k8s.V1Job): Promise<JobHealth> {
    const watch = this.watchOf(scanId);
    const now = this.options.timers.now();
    const pods = [...(this.podsByScan.get(scanId)?.values() ?? [])];
    const firstSeen = (key: string): number => {
      if (!watch.firstSeen.has(key)) watch.firstSeen.set(key, now);
      return watch.firstSeen.get(key)!;
    };
    if (pods.length > 0) watch.firstSeen.delete('nopod');
    const health = jobHealth({ job, pods, now, firstSeen, ...(watch.failedCreate === undefined ? {} : { failedCreate: watch.failedCreate }) });
    if (health.phase !== 'Running' || health.checkEvents !== true) return health;
    if (watch.eventReads >= MAX_EVENT_READS || now < (watch.nextEventReadAt ?? 0)) return { phase: 'Running', ...this.eventRecheck(watch, now) };
    watch.eventReads += 1;
    watch.nextEventReadAt = now + 2 * NO_POD_GRACE_MS;
    this.options.onRequest?.(scanId);
    const refusal = await this.failedCreateOf(job);
    if (refusal === undefined) return { phase: 'Running', ...this.eventRecheck(watch, now) };
    watch.failedCreate = refusal;
    return jobHealth({ job, pods, now, firstSeen, failedCreate: refusal });
  }

  private eventRecheck(watch: ScanWatch, now: number): { recheckAfterMs?: number } {
    return watch.eventReads >= MAX_EVENT_READS ? {} : { recheckAfterMs: Math.max(1, (watch.nextEventReadAt ?? now) - now) };
  }

  /** The message of the Job's latest FailedCreate event, if any. */
  private async failedCreateOf(job: k8s.V1Job): Promise<string | undefined> {
    const events = await this.api.get<k8s.CoreV1EventList>(kubePaths.core(job.metadata!.namespace!, 'events'), {
      query: { fieldSelector: `involvedObject.kind=Job,involvedObject.name=${job.metadata!.name!},reason=FailedCreate` },
    });
    const latest = events.items.sort((a, b) => eventTime(a) - eventTime(b)).at(-1);
    return latest?.message;
  }

  /** The scan's pods as the cache holds them (no request). */
  podsOf(scanId: string): k8s.V1Pod[] {
    return [...(this.podsByScan.get(scanId)?.values() ?? [])];
  }

  /** The latest progress figure the scanner's log showed. */
  progress(scanId: string): number | undefined {
    return this.watches.get(scanId)?.progress;
  }

  /** The scan ended: stop following its log and forget what was kept for it. */
  forget(scanId: string): void {
    this.watches.delete(scanId);
    for (const pod of this.podsByScan.get(scanId)?.values() ?? []) this.stopFollowing(podKey(pod));
  }

  private watchOf(scanId: string): ScanWatch {
    let watch = this.watches.get(scanId);
    if (watch === undefined) {
      watch = { firstSeen: new Map(), eventReads: 0 };
      this.watches.set(scanId, watch);
    }
    return watch;
  }

  private jobChanged(job: k8s.V1Job): void {
    this.created.delete(`${job.metadata?.namespace}/${job.metadata?.name}`);
    const scanId = job.metadata?.labels?.[SCAN_ID_LABEL];
    if (scanId !== undefined) this.notify(scanId);
  }

  private podChanged(event: 'add' | 'update' | 'delete', pod: k8s.V1Pod): void {
    const scanId = pod.metadata?.labels?.[SCAN_ID_LABEL];
    if (scanId === undefined) return;
    const pods = this.podsByScan.get(scanId) ?? new Map<string, k8s.V1Pod>();
    if (event === 'delete') {
      pods.delete(podKey(pod));
      this.stopFollowing(podKey(pod));
      this.followed.delete(podKey(pod));
    } else {
      pods.set(podKey(pod), pod);
      this.followWhileRunning(scanId, pod);
    }
    if (pods.size === 0) this.podsByScan.delete(scanId);
    else this.podsByScan.set(scanId, pods);
    this.notify(scanId);
  }

  /** A full list of a namespace replaces its part of the pod index: pods deleted there while the watch was down are dropped. */
  private podsListed(pods: readonly k8s.V1Pod[], namespace: string): void {
    const listed = new Set(pods.map(podKey));
    for (const [scanId, byKey] of this.podsByScan) {
      for (const [key, pod] of byKey) if (pod.metadata?.namespace === namespace && !listed.has(key)) byKey.delete(key);
      if (byKey.size === 0) this.podsByScan.delete(scanId);
    }
    for (const pod of pods) this.podChanged('update', pod);
  }

  private followWhileRunning(scanId: string, pod: k8s.V1Pod): void {
    if (this.options.followLogs === false || this.followed.has(podKey(pod))) return;
    const scanner =
      pod.status?.initContainerStatuses?.find((status) => status.name === 'scanner') ??
      pod.status?.containerStatuses?.find((status) => status.name === 'scanner');
    if (scanner?.state?.running === undefined) return;
    const type = pod.metadata?.labels?.[SCAN_TYPE_LABEL]?.toUpperCase() as ScanType | undefined;
    if (type === undefined) return;
    const following: Following = { stopped: false };
    this.followed.set(podKey(pod), following);
    const lines = new LineSplitter((line) => this.progressLine(scanId, type, line));
    this.options.onRequest?.(scanId);
    this.logs
      .follow(pod.metadata!.namespace!, pod.metadata!.name!, 'scanner', lines, { tailLines: 50 })
      .then((stream) => {
        // Stopped while connecting (the scan was forgotten, the pod deleted, the observer stopped): closed, never kept.
        if (following.stopped) stream.abort();
        else following.stream = stream;
      })
      .catch((error: unknown) => this.options.onError('scanner log not followed; progress shows at the end', error));
  }

  /** The key stays (one stream per pod for its life), the stream's handle goes. */
  private stopFollowing(key: string): void {
    const following = this.followed.get(key);
    if (following === undefined) return;
    following.stopped = true;
    following.stream?.abort();
    following.stream = undefined;
    this.followed.set(key, undefined);
  }

  /** Streams open or connecting (tests: a forgotten scan leaves none). */
  get followedStreams(): number {
    let count = 0;
    for (const following of this.followed.values()) if (following !== undefined) count += 1;
    return count;
  }

  private progressLine(scanId: string, type: ScanType, line: string): void {
    const progress = scannerFor(type).progressFrom(line);
    if (progress === undefined) return;
    const watch = this.watchOf(scanId);
    if (watch.progress === progress) return;
    watch.progress = progress;
    this.notify(scanId);
  }

  private notify(scanId: string): void {
    for (const listener of this.listeners) listener(scanId);
  }
}

function podKey(pod: k8s.V1Pod): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

function eventTime(event: k8s.CoreV1Event): number {
  const at = event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp;
  return at === undefined ? 0 : new Date(at as unknown as string).getTime();
}

/** A Writable that calls back with each complete line, holding at most MAX_LOG_LINE characters of a partial one. */
class LineSplitter extends Writable {
  private partial = '';

  constructor(private readonly onLine: (line: string) => void) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = parts.pop()!.slice(0, MAX_LOG_LINE);
    for (const line of parts) this.onLine(line.slice(0, MAX_LOG_LINE));
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.partial !== '') this.onLine(this.partial);
    done();
  }
}

/**
 * What the caches keep of a Job or a pod: its metadata (names, labels,
 * owners) and status, which is all Vigil reads of them (workload-health.ts,
 * login-step.ts). The spec, the pod template with its containers, and the
 * server's managedFields are dropped: the pod template is most of a Job's
 * size, and a real pod's spec most of a pod's.
 */
export function trimCached(object: { spec?: unknown; metadata?: { managedFields?: unknown } }): void {
  delete object.spec;
  delete object.metadata?.managedFields;
}
