/**
 * The Scan custom resource beside each Scan (DESIGN.md decision 2: the CR
 * stays small). Scanner Jobs are owned by it, so `kubectl get scans` lists
 * every Scan and deleting one removes its Jobs and Secrets.
 */
import * as k8s from '@kubernetes/client-node';
import type { Scan } from '../../domain/scans/scan.js';
import { SCAN_API_VERSION, SCAN_GROUP, SCAN_KIND, SCAN_PLURAL, SCAN_VERSION } from '../../domain/scans/scan-resource.js';
import { isAlreadyExists } from './kube-errors.js';

export interface ScanObjectRef {
  name: string;
  namespace: string;
  uid: string;
}

export class ScanCustomResources {
  private readonly api: k8s.CustomObjectsApi;

  constructor(kubeConfig: k8s.KubeConfig) {
    this.api = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  }

  /** The Scan's CR in the namespace, created from the Scan when it does not exist yet. */
  async ensure(scan: Scan, namespace: string): Promise<ScanObjectRef> {
    const body = {
      apiVersion: SCAN_API_VERSION,
      kind: SCAN_KIND,
      metadata: { name: scan.name, namespace, labels: { 'vigil.dev/scan-id': scan.id, 'app.kubernetes.io/managed-by': 'vigil' } },
      spec: { type: scan.type, targets: scan.requestedTargets.map((target) => target.target) },
    };
    try {
      const created = (await this.api.createNamespacedCustomObject({ group: SCAN_GROUP, version: SCAN_VERSION, namespace, plural: SCAN_PLURAL, body })) as {
        metadata: { uid: string };
      };
      return { name: scan.name, namespace, uid: created.metadata.uid };
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const existing = (await this.api.getNamespacedCustomObject({ group: SCAN_GROUP, version: SCAN_VERSION, namespace, plural: SCAN_PLURAL, name: scan.name })) as {
        metadata: { uid: string };
      };
      return { name: scan.name, namespace, uid: existing.metadata.uid };
    }
  }
}
