/**
 * The Scan custom resource beside each Scan (DESIGN.md decision 2: the CR
 * stays small). Scanner Jobs are owned by it, so `kubectl get scans` lists
 * every Scan and deleting one removes its Jobs and Secrets. A Scan that a
 * schedule's run created is owned in turn by that ScheduledScan's CR.
 */
import type * as k8s from './client-node.js';
import { KubeApi, kubePaths } from './kube-api.js';
import type { Scan } from '../../domain/scans/scan.js';
import { SCAN_API_VERSION, SCAN_GROUP, SCAN_KIND, SCAN_PLURAL, SCAN_VERSION } from '../../domain/scans/scan-resource.js';
import type { OwnerReference } from './job-manifest.js';
import { createOrRead } from './kube-errors.js';
import { MANAGED_BY_LABEL, SCAN_FINALIZER, SCAN_ID_LABEL } from './reconciler-kit.js';

export interface ScanObjectRef {
  name: string;
  namespace: string;
  uid: string;
}

/** The ScheduledScan CR whose run created the Scan; undefined when its uid is not known, and the CR is created without an owner. */
export type ScanOwnerLookup = (scan: Scan) => Promise<OwnerReference | undefined>;

/** CRs this process created (or is creating) and the informer has not shown yet, remembered at most. */
const MAX_ENSURED = 4096;
/** A creation is shared this long at most: the informer shows a CR well within it (its watch is a push). */
const SHARE_MS = 60_000;

export class ScanCustomResources {
  private readonly api: KubeApi;
  /**
   * One creation per scan: the Scan reconciler (its row has no CR in the
   * cache) and the Job runner (its Job needs the CR's uid) both ensure the CR
   * at a scan's start, while the informer has not shown it yet; the second
   * shares the first's request instead of sending a POST that answers 409
   * and a GET. Forgotten once the informer shows the CR (`shown`), so a CR
   * lost later is created again; keyed by the scan's id too, so a CR
   * re-applied under the same name is never taken for the old one.
   */
  private readonly ensured = new Map<string, { scanId: string; at: number; ref: Promise<ScanObjectRef> }>();
  /** Told of each request sent for a scan (its id), for the scan's request budget (request-budget.ts). */
  onRequest: (scanId: string) => void = () => undefined;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly ownerOf: ScanOwnerLookup = async () => undefined,
  ) {
    this.api = new KubeApi(kubeConfig);
  }

  /** The Scan's CR in the namespace, created from the Scan when it does not exist yet. */
  ensure(scan: Scan, namespace: string): Promise<ScanObjectRef> {
    const key = `${namespace}/${scan.name}`;
    const known = this.ensured.get(key);
    if (known !== undefined && known.scanId === scan.id && Date.now() - known.at < SHARE_MS) return known.ref;
    const ref = this.create(scan, namespace);
    const entry = { scanId: scan.id, at: Date.now(), ref };
    this.ensured.delete(key);
    this.ensured.set(key, entry);
    if (this.ensured.size > MAX_ENSURED) this.ensured.delete(this.ensured.keys().next().value!);
    // A failed creation is forgotten, so the next pass tries again.
    ref.catch(() => this.ensured.get(key) === entry && this.ensured.delete(key));
    return ref;
  }

  /** The informer shows the CR: a later ensure (the CR was lost) creates it again. */
  shown(namespace: string, name: string): void {
    if (this.ensured.size > 0) this.ensured.delete(`${namespace}/${name}`);
  }

  private async create(scan: Scan, namespace: string): Promise<ScanObjectRef> {
    const owner = scan.scheduledBy === null ? undefined : await this.ownerOf(scan);
    const body = {
      apiVersion: SCAN_API_VERSION,
      kind: SCAN_KIND,
      metadata: {
        name: scan.name,
        namespace,
        labels: { [SCAN_ID_LABEL]: scan.id, [MANAGED_BY_LABEL]: 'vigil' },
        // Held until the Scan reconciler has stopped the scan and deleted its row (scan-reconciler.ts).
        finalizers: [SCAN_FINALIZER],
        ...(owner === undefined ? {} : { ownerReferences: [owner] }),
      },
      spec: { type: scan.type, targets: scan.requestedTargets.map((target) => target.target) },
    };
    const object = await createOrRead(
      () => (this.onRequest(scan.id), this.api.create<{ metadata: { uid: string } }>(kubePaths.namespaced(SCAN_GROUP, SCAN_VERSION, namespace, SCAN_PLURAL), body)),
      () => (this.onRequest(scan.id), this.api.get<{ metadata: { uid: string } }>(kubePaths.namespaced(SCAN_GROUP, SCAN_VERSION, namespace, SCAN_PLURAL, scan.name))),
    );
    return { name: scan.name, namespace, uid: object.metadata.uid };
  }
}
