/**
 * The Scan custom resource beside each Scan (DESIGN.md decision 2: the CR
 * stays small). Scanner Jobs are owned by it, so `kubectl get scans` lists
 * every Scan and deleting one removes its Jobs and Secrets. A Scan that a
 * schedule's run created is owned in turn by that ScheduledScan's CR.
 */
import * as k8s from '@kubernetes/client-node';
import type { Scan } from '../../domain/scans/scan.js';
import { SCAN_API_VERSION, SCAN_GROUP, SCAN_KIND, SCAN_PLURAL, SCAN_VERSION } from '../../domain/scans/scan-resource.js';
import type { OwnerReference } from './job-manifest.js';
import { createOrRead } from './kube-errors.js';

export interface ScanObjectRef {
  name: string;
  namespace: string;
  uid: string;
}

/** The ScheduledScan CR whose run created the Scan; undefined when its uid is not known, and the CR is created without an owner. */
export type ScanOwnerLookup = (scan: Scan) => Promise<OwnerReference | undefined>;

export class ScanCustomResources {
  private readonly api: k8s.CustomObjectsApi;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly ownerOf: ScanOwnerLookup = async () => undefined,
  ) {
    this.api = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  }

  /** The Scan's CR in the namespace, created from the Scan when it does not exist yet. */
  async ensure(scan: Scan, namespace: string): Promise<ScanObjectRef> {
    const owner = scan.scheduledBy === null ? undefined : await this.ownerOf(scan);
    const body = {
      apiVersion: SCAN_API_VERSION,
      kind: SCAN_KIND,
      metadata: {
        name: scan.name,
        namespace,
        labels: { 'vigil.dev/scan-id': scan.id, 'app.kubernetes.io/managed-by': 'vigil' },
        // Held until the Scan reconciler has stopped the scan and deleted its row (scan-reconciler.ts).
        finalizers: ['vigil.dev/scan'],
        ...(owner === undefined ? {} : { ownerReferences: [owner] }),
      },
      spec: { type: scan.type, targets: scan.requestedTargets.map((target) => target.target) },
    };
    const ref = { group: SCAN_GROUP, version: SCAN_VERSION, namespace, plural: SCAN_PLURAL };
    const object = (await createOrRead(
      () => this.api.createNamespacedCustomObject({ ...ref, body }),
      () => this.api.getNamespacedCustomObject({ ...ref, name: scan.name }),
    )) as { metadata: { uid: string } };
    return { name: scan.name, namespace, uid: object.metadata.uid };
  }
}
