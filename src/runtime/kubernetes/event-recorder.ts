/**
 * Kubernetes Events on Vigil's objects, so `kubectl describe scan` tells the
 * story (issue 13). Modelled on client-go's recorder and EventCorrelator:
 *
 * - the same event again (object, type, reason, message) within
 *   SIMILAR_WINDOW_MS raises the count of the existing Event (one patch)
 *   instead of creating another;
 * - each object has a token bucket (burst SPAM_BURST, one token per
 *   SPAM_REFILL_MS) and events past it are dropped, as client-go's spam
 *   filter does;
 * - recording never fails or slows a reconcile: writes run in the background
 *   and their errors are only reported.
 *
 * Memory is bounded: at most MAX_REMEMBERED events and buckets are kept, and
 * at most MAX_QUEUED writes wait (WRITERS at a time).
 */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { Timers } from '../../app/controller/timer.js';

export const SPAM_BURST = 25;
export const SPAM_REFILL_MS = 5 * 60_000;
export const SIMILAR_WINDOW_MS = 10 * 60_000;
const MAX_REMEMBERED = 4096;
/** Event writes in flight at once, and waiting at most. */
const WRITERS = 4;
const MAX_QUEUED = 10_000;
/** The API server caps an Event's message at 1 KiB in practice (events.k8s.io); longer ones are cut. */
const MAX_MESSAGE = 1024;

export interface InvolvedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string };
}

export interface EventRecorder {
  normal(object: InvolvedObject, reason: string, message: string): void;
  warning(object: InvolvedObject, reason: string, message: string): void;
}

/** Records nothing: the embedded runtime and tests that do not look at Events. */
export const NO_EVENTS: EventRecorder = { normal: () => undefined, warning: () => undefined };

interface Remembered {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
  lastSeenMs: number;
}

interface Bucket {
  tokens: number;
  refilledAtMs: number;
}

export interface KubernetesEventRecorderOptions {
  kubeConfig: k8s.KubeConfig;
  timers: Timers;
  /** Kind and apiVersion of objects recorded without them (custom resources from a cache carry them). */
  defaults?: { apiVersion: string; kind: string };
  onError: (error: unknown) => void;
}

export class KubernetesEventRecorder implements EventRecorder {
  private readonly api: k8s.CoreV1Api;
  private readonly remembered = new Map<string, Remembered>();
  private readonly buckets = new Map<string, Bucket>();
  /** Writes waiting for one of WRITERS slots; bounded: past MAX_QUEUED, new events are dropped (events are best effort). */
  private readonly queued: Array<() => Promise<void>> = [];
  private writing = 0;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly options: KubernetesEventRecorderOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  normal(object: InvolvedObject, reason: string, message: string): void {
    this.record(object, 'Normal', reason, message);
  }

  warning(object: InvolvedObject, reason: string, message: string): void {
    this.record(object, 'Warning', reason, message);
  }

  /** Resolves once every event recorded so far was written (tests, shutdown). */
  async flush(): Promise<void> {
    if (this.writing === 0 && this.queued.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private enqueue(write: () => Promise<void>): void {
    if (this.queued.length >= MAX_QUEUED) return;
    this.queued.push(write);
    this.drain();
  }

  private drain(): void {
    while (this.writing < WRITERS && this.queued.length > 0) {
      const write = this.queued.shift()!;
      this.writing += 1;
      write()
        .catch((error: unknown) => this.options.onError(error))
        .finally(() => {
          this.writing -= 1;
          this.drain();
          if (this.writing === 0 && this.queued.length === 0) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }

  private record(object: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const { name, namespace, uid } = object.metadata ?? {};
    if (name === undefined || namespace === undefined) return;
    const now = this.options.timers.now();
    if (!this.takeToken(uid ?? `${namespace}/${name}`, now)) return;
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const key = JSON.stringify([uid, namespace, name, type, reason, text]);
    const seen = this.remembered.get(key);
    const write = seen !== undefined && now - seen.lastSeenMs < SIMILAR_WINDOW_MS ? () => this.repeat(key, seen, now) : () => this.create(key, object, type, reason, text, now);
    this.enqueue(write);
  }

  private async create(key: string, object: InvolvedObject, type: string, reason: string, message: string, now: number): Promise<void> {
    const { name, namespace, uid } = object.metadata as { name: string; namespace: string; uid?: string };
    const at = new Date(now).toISOString();
    const eventName = `${name}.${now.toString(16)}${randomBytes(2).toString('hex')}`;
    const event: k8s.CoreV1Event = {
      metadata: { name: eventName, namespace },
      involvedObject: {
        apiVersion: object.apiVersion ?? this.options.defaults?.apiVersion,
        kind: object.kind ?? this.options.defaults?.kind,
        name,
        namespace,
        ...(uid === undefined ? {} : { uid }),
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: at as unknown as Date,
      lastTimestamp: at as unknown as Date,
      source: { component: 'vigil' },
      reportingComponent: 'vigil.dev/operator',
      reportingInstance: 'vigil',
    };
    await this.api.createNamespacedEvent({ namespace, body: event });
    this.remember(key, { name: eventName, namespace, count: 1, firstTimestamp: at, lastSeenMs: now });
  }

  private async repeat(key: string, seen: Remembered, now: number): Promise<void> {
    const count = seen.count + 1;
    await this.api.patchNamespacedEvent(
      { name: seen.name, namespace: seen.namespace, body: { count, lastTimestamp: new Date(now).toISOString() } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    this.remember(key, { ...seen, count, lastSeenMs: now });
  }

  private remember(key: string, entry: Remembered): void {
    this.remembered.delete(key);
    this.remembered.set(key, entry);
    if (this.remembered.size > MAX_REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
  }

  /** client-go's spam filter: a burst per object, then one event per refill period. */
  private takeToken(objectKey: string, now: number): boolean {
    const bucket = this.buckets.get(objectKey) ?? { tokens: SPAM_BURST, refilledAtMs: now };
    const refills = Math.floor((now - bucket.refilledAtMs) / SPAM_REFILL_MS);
    if (refills > 0) {
      bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + refills);
      bucket.refilledAtMs += refills * SPAM_REFILL_MS;
    }
    this.buckets.delete(objectKey);
    this.buckets.set(objectKey, bucket);
    if (this.buckets.size > MAX_REMEMBERED) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
