/**
 * Kubernetes Events on Vigil's objects, so `kubectl describe scan` tells the
 * story (issue 13). Modelled on client-go's recorder and EventCorrelator:
 *
 * - the same event again (object, type, reason, message) within
 *   SIMILAR_WINDOW_MS raises the count of the existing Event (one patch)
 *   instead of creating another;
 * - similar events (same object, type and reason, other messages) are
 *   aggregated as client-go's EventAggregator does: once SIMILAR_MAX_EVENTS
 *   distinct messages were seen within SIMILAR_WINDOW_MS, each further one
 *   is recorded as one Event, "(combined from similar events): <message>",
 *   whose count rises and whose message follows the latest;
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
import type * as k8s from './client-node.js';
import { KubeApi, kubePaths } from './kube-api.js';
import type { Timers } from '../../app/controller/timer.js';

export const SPAM_BURST = 25;
export const SPAM_REFILL_MS = 5 * 60_000;
export const SIMILAR_WINDOW_MS = 10 * 60_000;
/** Distinct messages of similar events before they are combined into one Event (client-go's maxEvents). */
export const SIMILAR_MAX_EVENTS = 10;
export const COMBINED_PREFIX = '(combined from similar events): ';
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

/** Similar events of one object, type and reason: the distinct messages seen (up to SIMILAR_MAX_EVENTS) and when the last came. */
interface Similar {
  messages: Set<string>;
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
  private readonly api: KubeApi;
  private readonly remembered = new Map<string, Remembered>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly similar = new Map<string, Similar>();
  /** Per Event name, the end of its last write: a count's patch waits for the Event's creation. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Writes waiting for one of WRITERS slots; bounded: past MAX_QUEUED, new events are dropped (events are best effort). */
  private readonly queued: Array<() => Promise<void>> = [];
  private writing = 0;
  /** Numbers the Events this process creates, for their names. */
  private sequence = 0;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly options: KubernetesEventRecorderOptions) {
    this.api = new KubeApi(options.kubeConfig);
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
    if (this.queued.length >= MAX_QUEUED) return; // best effort: dropped before any bookkeeping
    const now = this.options.timers.now();
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const aggregated = this.aggregate(JSON.stringify([uid, namespace, name, type, reason]), text, now);
    if (!this.takeToken(uid ?? `${namespace}/${name}`, now)) return;
    const { key, message: shown } = aggregated;
    const seen = this.remembered.get(key);
    if (seen !== undefined && now - seen.lastSeenMs < SIMILAR_WINDOW_MS) {
      const entry = { ...seen, count: seen.count + 1, lastSeenMs: now };
      this.remember(key, entry);
      this.write(entry.name, () => this.repeat(entry, shown, now));
      return;
    }
    const at = new Date(now).toISOString();
    // Unique within this process by its sequence number (two Events of one object in one millisecond, or under a
    // stopped test clock, no longer share a name by chance: 2 random bytes alone collided once in ~200 bursts of 25),
    // and across processes by the random part.
    this.sequence = (this.sequence + 1) % 0x10000;
    const entry: Remembered = {
      name: `${name}.${now.toString(16)}${this.sequence.toString(16).padStart(4, '0')}${randomBytes(2).toString('hex')}`,
      namespace,
      count: 1,
      firstTimestamp: at,
      lastSeenMs: now,
    };
    this.remember(key, entry);
    this.write(entry.name, () =>
      this.create(object, entry, type, reason, shown).catch((error: unknown) => {
        // Not created: the next such event creates it anew.
        if (this.remembered.get(key)?.name === entry.name) this.remembered.delete(key);
        throw error;
      }),
    );
  }

  /**
   * client-go's EventAggregator: the event as it is while its object, type
   * and reason had fewer than SIMILAR_MAX_EVENTS distinct messages within
   * the window (keyed by its message too), else the combined event, keyed
   * without its message so every further similar one counts up one Event.
   */
  private aggregate(similarKey: string, message: string, now: number): { key: string; message: string } {
    let similar = this.similar.get(similarKey);
    if (similar === undefined || now - similar.lastSeenMs >= SIMILAR_WINDOW_MS) similar = { messages: new Set(), lastSeenMs: now };
    similar.lastSeenMs = now;
    if (similar.messages.size < SIMILAR_MAX_EVENTS) similar.messages.add(message);
    this.similar.delete(similarKey);
    this.similar.set(similarKey, similar);
    if (this.similar.size > MAX_REMEMBERED) this.similar.delete(this.similar.keys().next().value!);
    if (similar.messages.size < SIMILAR_MAX_EVENTS) return { key: JSON.stringify([similarKey, message]), message };
    return { key: JSON.stringify([similarKey, COMBINED_PREFIX]), message: `${COMBINED_PREFIX}${message}`.slice(0, MAX_MESSAGE) };
  }

  /** Queues a write of the Event `name`, after the writes of it queued before. */
  private write(name: string, write: () => Promise<void>): void {
    const previous = this.chains.get(name);
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    this.chains.set(name, done);
    this.enqueue(async () => {
      try {
        await previous;
        await write();
      } finally {
        finished();
        if (this.chains.get(name) === done) this.chains.delete(name);
      }
    });
  }

  private async create(object: InvolvedObject, entry: Remembered, type: string, reason: string, message: string): Promise<void> {
    const { name, namespace, uid } = object.metadata as { name: string; namespace: string; uid?: string };
    const event: k8s.CoreV1Event = {
      metadata: { name: entry.name, namespace },
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
      firstTimestamp: entry.firstTimestamp as unknown as Date,
      lastTimestamp: entry.firstTimestamp as unknown as Date,
      source: { component: 'vigil' },
      reportingComponent: 'vigil.dev/operator',
      reportingInstance: 'vigil',
    };
    await this.api.create(kubePaths.core(namespace, 'events'), event);
  }

  /** A repeat: the count, the time and (a combined Event follows the latest similar one) the message. */
  private async repeat(entry: Remembered, message: string, now: number): Promise<void> {
    await this.api.patch(kubePaths.core(entry.namespace, 'events', entry.name), { count: entry.count, lastTimestamp: new Date(now).toISOString(), message });
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
