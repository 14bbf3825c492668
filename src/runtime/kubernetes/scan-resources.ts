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
import type { ScanObject } from './scan-face.js';

export interface ScanObjectRef {
  name: string;
  namespace: string;
  uid: string;
}

/** The ScheduledScan CR whose run created the Scan; undefined when its uid is not known, and the CR is created without an owner. */
export type ScanOwnerLookup = (scan: Scan) => Promise<OwnerReference | undefined>;

/** CRs this process created and the informer has not shown yet, remembered at most (a bound; each is forgotten once shown). */
const MAX_MADE = 4096;

export class ScanCustomResources {
  private readonly api: KubeApi;
  /**
   * The CRs this process created, by `namespace/name`, until the informer
   * shows them: the Scan's Job is created in the same pass as its CR (the
   * reconciler receives the object, then starts the workload), before the
   * cache has it, and takes its owner's uid from here. A creation the API
   * server forbade is kept too, so the start fails with the same reason.
   */
  private readonly made = new Map<string, { scanId: string; uid: string } | { scanId: string; error: unknown }>();
  /** Told of each request sent for a scan (its id), for the scan's request budget (request-budget.ts). */
  onRequest: (scanId: string) => void = () => undefined;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly ownerOf: ScanOwnerLookup = async () => undefined,
    /** The CR's uid as the informer's cache holds it. */
    private readonly cachedUid: (namespace: string, name: string) => string | undefined = () => undefined,
  ) {
    this.api = new KubeApi(kubeConfig);
  }

  /** Creates the Scan's CR in the namespace (a 409 reads the one that exists); the object as the API server answered. */
  async create(scan: Scan, namespace: string): Promise<ScanObject> {
    const key = `${namespace}/${scan.name}`;
    try {
      const object = await this.createOrRead(scan, namespace);
      this.remember(key, { scanId: scan.id, uid: object.metadata!.uid! });
      return object;
    } catch (error) {
      this.remember(key, { scanId: scan.id, error });
      throw error;
    }
  }

  /** The owner a Scan's Job gets: its CR, from the cache or as this process created it; throws what the creation met, or that it is not made yet. */
  ownerFor(scan: Scan, namespace: string): ScanObjectRef {
    const cached = this.cachedUid(namespace, scan.name);
    if (cached !== undefined) return { name: scan.name, namespace, uid: cached };
    const made = this.made.get(`${namespace}/${scan.name}`);
    if (made !== undefined && made.scanId === scan.id) {
      if ('uid' in made) return { name: scan.name, namespace, uid: made.uid };
      throw made.error;
    }
    throw new Error(`the Scan resource ${namespace}/${scan.name} is not created yet; the start is tried again`);
  }

  /** The informer shows the CR: its cache answers from now on. */
  shown(namespace: string, name: string): void {
    if (this.made.size > 0) this.made.delete(`${namespace}/${name}`);
  }

  private remember(key: string, entry: { scanId: string; uid: string } | { scanId: string; error: unknown }): void {
    this.made.delete(key);
    this.made.set(key, entry);
    if (this.made.size > MAX_MADE) this.made.delete(this.made.keys().next().value!);
  }

  private async createOrRead(scan: Scan, namespace: string): Promise<ScanObject> {
    const owner = scan.scheduledBy === null ? undefined : await this.ownerOf(scan);
    const body = {
      apiVersion: SCAN_API_VERSION,
      kind: SCAN_KIND,
      metadata: {
        name: scan.name,
        namespace,
        labels: { [SCAN_ID_LABEL]: scan.id, [MANAGED_BY_LABEL]: 'vigil' },
        // Held until the Scan reconciler has stopped the scan and deleted its row (scan-face.ts).
        finalizers: [SCAN_FINALIZER],
        ...(owner === undefined ? {} : { ownerReferences: [owner] }),
      },
      spec: { type: scan.type, targets: scan.requestedTargets.map((target) => target.target) },
    };
    return createOrRead(
      () => (this.onRequest(scan.id), this.api.create<ScanObject>(kubePaths.namespaced(SCAN_GROUP, SCAN_VERSION, namespace, SCAN_PLURAL), body)),
      () => (this.onRequest(scan.id), this.api.get<ScanObject>(kubePaths.namespaced(SCAN_GROUP, SCAN_VERSION, namespace, SCAN_PLURAL, scan.name))),
    );
  }
}
