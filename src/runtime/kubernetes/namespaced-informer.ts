/**
 * The informer factory: one kind of object, watched in each namespace of a
 * NamespaceSet and nowhere else (one RestartingInformer per namespace, each
 * listing and watching `/namespaces/{ns}/...`, so RBAC needs no more than a
 * Role there). A namespace added to the set while the service runs gets its
 * informer at once; its first list is a resync like any other. Reads go to
 * the namespace's cache, so the callers see one cache as before.
 */
import type * as k8s from './client-node.js';
import type { NamespaceSet } from './namespace-set.js';
import { RestartingInformer, type RestartingInformerOptions } from './restarting-informer.js';

export interface NamespacedInformerOptions<T extends k8s.KubernetesObject> extends Omit<RestartingInformerOptions<T>, 'path' | 'onListed'> {
  namespaces: NamespaceSet;
  /** The collection in one namespace, e.g. kubePaths.core(namespace, 'pods'). */
  pathIn: (namespace: string) => string;
  /** After every full list of one namespace (its first, each after a restart or a 410): that namespace's objects. */
  onListed?: (objects: readonly T[], namespace: string) => void;
}

export class NamespacedInformer<T extends k8s.KubernetesObject> {
  private readonly informers = new Map<string, RestartingInformer<T>>();
  private started = false;

  constructor(private readonly options: NamespacedInformerOptions<T>) {
    options.namespaces.onAdded((namespace) => {
      if (this.started) void this.informerIn(namespace).start();
    });
  }

  /** Resolves once every namespace's informer has its first list (or its first attempt failed: it keeps retrying). */
  async start(): Promise<void> {
    this.started = true;
    await Promise.all(this.options.namespaces.current().map((namespace) => this.informerIn(namespace).start()));
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }

  cached(namespace: string, name: string): T | undefined {
    return this.informers.get(namespace)?.cached(namespace, name);
  }

  /** Every object in every namespace's cache. */
  list(): T[] {
    const all: T[] = [];
    for (const informer of this.informers.values()) for (const object of informer.list()) all.push(object);
    return all;
  }

  /** The namespace's cache holds a full list: until then, an object missing from it may still exist. */
  syncedIn(namespace: string): boolean {
    return this.informers.get(namespace)?.synced ?? false;
  }

  /** The namespaces watched now. */
  get namespaces(): readonly string[] {
    return [...this.informers.keys()];
  }

  private informerIn(namespace: string): RestartingInformer<T> {
    let informer = this.informers.get(namespace);
    if (informer !== undefined) return informer;
    const { namespaces: _namespaces, pathIn, onListed, ...common } = this.options;
    informer = new RestartingInformer<T>({
      ...common,
      path: pathIn(namespace),
      ...(onListed === undefined ? {} : { onListed: (objects: readonly T[]) => onListed(objects, namespace) }),
    });
    this.informers.set(namespace, informer);
    return informer;
  }
}
