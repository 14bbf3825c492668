/**
 * A client-node informer that keeps running, its cache trimmed to what Vigil
 * reads (`trim`). It lists through KubeApi.listAll, in pages of 500 (a
 * collection of any size stays within the bound on each answer; a continue
 * token that expired starts the list again), and watches from the list's
 * resourceVersion. client-node re-lists by itself after a 410 on the watch,
 * but on any other error (a broken watch, an API server restart) it stops
 * for good (STACK.md); this wrapper starts it again with exponential
 * backoff, and tells a deliberate stop from a failure.
 */
import * as k8s from './client-node.js';
import { KubeApi } from './kube-api.js';
import type { TimerHandle, Timers } from '../../app/controller/timer.js';
import { backoffDelay } from '../../app/controller/backoff.js';

export interface RestartingInformerOptions<T extends k8s.KubernetesObject> {
  kubeConfig: k8s.KubeConfig;
  /** The collection listed and watched, e.g. /apis/vigil.dev/v1alpha1/namespaces/vigil-acme/scans */
  path: string;
  labelSelector?: string;
  onObject: (event: 'add' | 'update' | 'delete', object: T) => void;
  onError: (error: unknown, restartInMs: number) => void;
  /**
   * Drops from each object, in place, what Vigil never reads, before the
   * cache keeps it and anyone sees it (client-go's cache transform): the
   * cache holds the very objects the list and the watch return, so a Job
   * kept without its pod template costs a fraction of its memory.
   */
  trim?: (object: T) => void;
  /**
   * Called after every full list (the first, and each after a restart or a
   * 410): the level-triggered resync, where a reconciler enqueues every key
   * so a missed event or a failed write is healed by the next pass.
   */
  onListed?: (objects: readonly T[]) => void;
  timers: Timers;
  backoff?: { baseMs: number; maxMs: number };
}

export class RestartingInformer<T extends k8s.KubernetesObject> {
  private readonly informer: k8s.Informer<T> & k8s.ObjectCache<T>;
  private readonly api: KubeApi;
  private stopping = false;
  private failures = 0;
  private restartTimer: TimerHandle | undefined;
  private listedOnce = false;

  constructor(private readonly options: RestartingInformerOptions<T>) {
    this.api = new KubeApi(options.kubeConfig);
    this.informer = k8s.makeInformer(options.kubeConfig, options.path, () => this.listAndResync(), options.labelSelector);
    // The first handlers registered: client-node calls them in order, with the object its cache has just stored.
    for (const event of ['add', 'update', 'delete'] as const) {
      this.informer.on(event, (object: T) => {
        options.trim?.(object);
        options.onObject(event, object);
      });
    }
    this.informer.on('connect', () => {
      this.failures = 0;
    });
    this.informer.on('error', (error: unknown) => this.failed(error));
  }

  async start(): Promise<void> {
    this.stopping = false;
    try {
      await this.informer.start();
    } catch (error) {
      this.failed(error);
    }
  }

  /** The object as the informer last saw it (a lister's read, as in sample-controller); undefined when it is gone or not listed yet. */
  cached(namespace: string, name: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  /** Every object in the cache. */
  list(): readonly T[] {
    return this.informer.list();
  }

  /** The cache holds a full list: until then, an object missing from it may still exist. */
  get synced(): boolean {
    return this.listedOnce;
  }

  /** client-node applies the list to its cache after this resolves, so the resync runs on the next turn, once it has. */
  private async listAndResync(): Promise<k8s.KubernetesListObject<T>> {
    const { labelSelector, trim } = this.options;
    const listed = await this.api.listAll<T>(this.options.path, { query: { labelSelector }, ...(trim === undefined ? {} : { each: trim }) });
    this.listedOnce = true; // client-node fills its cache from this list before any other task runs
    setImmediate(() => this.options.onListed?.(listed.items));
    return listed;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== undefined) this.options.timers.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.informer.stop();
  }

  private failed(error: unknown): void {
    if (this.stopping || this.restartTimer !== undefined) return; // stop() itself reports an AbortError
    const delay = backoffDelay(this.failures, this.options.backoff ?? { baseMs: 500, maxMs: 60_000 });
    this.failures += 1;
    this.options.onError(error, delay);
    this.restartTimer = this.options.timers.setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      // A restart resumes the watch from the last resourceVersion without a list when it can; the pass over the cache happens anyway.
      this.start()
        .then(() => {
          if (!this.stopping) this.options.onListed?.(this.informer.list());
        })
        // A pass over the cache that throws is reported; the watch itself runs on.
        .catch((error: unknown) => this.options.onError(error, 0));
    }, delay);
  }
}
