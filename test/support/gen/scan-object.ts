/**
 * Scan custom resources for tests, built from options as cert-manager's
 * test/unit/gen builds its objects: `scanObject('nightly', withScanId(id),
 * withVigilStatus({ state: 'SUCCEEDED' }))` rather than inline literals.
 */
import type { KubeObject } from '../fake-kube-apiserver.js';
import { SCAN_FINALIZER, SCAN_ID_LABEL } from '../../../src/runtime/kubernetes/reconciler-kit.js';

export const SCAN_API_VERSION = 'vigil.dev/v1alpha1';
export const TENANT_NAMESPACE = 'vigil-acme';

export type ScanObjectOption = (object: KubeObject) => KubeObject;

export function scanObject(name: string, ...options: ScanObjectOption[]): KubeObject {
  const base: KubeObject = {
    apiVersion: SCAN_API_VERSION,
    kind: 'Scan',
    metadata: { name, namespace: TENANT_NAMESPACE },
    spec: { type: 'NMAP', targets: ['scanme.example.com'] },
  } as KubeObject;
  return options.reduce((object, option) => option(object), base);
}

export const inNamespace =
  (namespace: string): ScanObjectOption =>
  (object) => ({ ...object, metadata: { ...object.metadata, namespace } });

/** Labelled with a scan's id and holding Vigil's finalizer: a CR Vigil made or adopted. */
export const withScanId =
  (scanId: string): ScanObjectOption =>
  (object) => ({
    ...object,
    metadata: { ...object.metadata, labels: { ...object.metadata.labels, [SCAN_ID_LABEL]: scanId }, finalizers: [SCAN_FINALIZER] },
  });

export const withSpec =
  (spec: Record<string, unknown>): ScanObjectOption =>
  (object) => ({ ...object, spec: { ...(object.spec as object), ...spec } });

/** The status Vigil projects, as far as a test needs it. */
export const withVigilStatus =
  (status: Record<string, unknown>): ScanObjectOption =>
  (object) => ({ ...object, status: { progress: 0, conditions: [], ...status } });

export const beingDeleted =
  (at = '2026-11-25T00:00:00Z'): ScanObjectOption =>
  (object) => ({ ...object, metadata: { ...object.metadata, deletionTimestamp: at } });

export function scanRef(name: string, namespace = TENANT_NAMESPACE) {
  return { apiVersion: SCAN_API_VERSION, kind: 'Scan', namespace, name };
}
