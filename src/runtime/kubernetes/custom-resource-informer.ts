/**
 * An informer on one kind of Vigil's custom resources (Scans,
 * ScheduledScans) in each namespace bound to an account
 * (namespaced-informer.ts), restarted with backoff when its watch breaks,
 * listed in pages. Its cache keeps each CR without what Vigil never reads:
 * managedFields (on a cluster, every object carries them, often larger than
 * its spec) and kubectl's last-applied-configuration annotation (a copy of
 * the whole applied object, on every Scan applied with `kubectl apply`).
 * Vigil changes CRs only with patches, never by writing a cached object
 * back, so nothing it sends depends on what is dropped.
 */
import type * as k8s from './client-node.js';
import type { Timers } from '../../app/controller/timer.js';
import { kubePaths } from './kube-api.js';
import type { NamespaceSet } from './namespace-set.js';
import { NamespacedInformer } from './namespaced-informer.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

export interface CustomResourceInformerOptions {
  kubeConfig: k8s.KubeConfig;
  namespaces: NamespaceSet;
  group: string;
  version: string;
  plural: string;
  onObject: (event: 'add' | 'update' | 'delete', object: k8s.KubernetesObject) => void;
  onListed?: () => void;
  onError: (error: unknown, restartInMs: number) => void;
  timers: Timers;
}

export function customResourceInformer(options: CustomResourceInformerOptions): NamespacedInformer<k8s.KubernetesObject> {
  const { group, version, plural, onListed, ...rest } = options;
  return new NamespacedInformer<k8s.KubernetesObject>({
    ...rest,
    pathIn: (namespace) => kubePaths.namespaced(group, version, namespace, plural),
    trim: trimCustomResource,
    ...(onListed === undefined ? {} : { onListed: () => onListed() }),
  });
}

/** Drops, in place, managedFields and the last-applied annotation (the annotations object goes when it held only that). */
export function trimCustomResource(object: k8s.KubernetesObject): void {
  const metadata = object.metadata;
  if (metadata === undefined) return;
  delete metadata.managedFields;
  if (metadata.annotations !== undefined && LAST_APPLIED_ANNOTATION in metadata.annotations) {
    delete metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(metadata.annotations).length === 0) delete metadata.annotations;
  }
}
