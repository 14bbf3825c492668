/**
 * Keeps each Scan's custom resource in step with the Scan (DESIGN.md
 * decision 3): the CR exists from the moment the Scan does, and its status
 * is written with a merge patch on the status subresource, only when it
 * changed. Writes for one Scan are serialised and coalesced: only the latest
 * state is sent, so a burst of progress updates costs one request.
 */
import * as k8s from '@kubernetes/client-node';
import type { OutboxEvent } from '../../domain/events/event.js';
import type { Scan, ScanState } from '../../domain/scans/scan.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION } from '../../domain/scans/scan-resource.js';
import { scanStatusOf } from '../../domain/scans/scan-status.js';
import type { ScanListQuery, ScanRepository, StoredResultFile } from '../../app/ports.js';
import { CoalescedWrites } from './coalesced-writes.js';
import { isForbidden, isNotFound } from './kube-errors.js';
import type { ScanLocation } from './job-runner.js';
import type { ScanCustomResources } from './scan-resources.js';

export interface ScanStatusMirrorOptions {
  kubeConfig: k8s.KubeConfig;
  scanResources: ScanCustomResources;
  locate: (scanId: string) => ScanLocation | undefined;
  onError: (scanId: string, error: unknown) => void;
}

export class ScanStatusMirror {
  private readonly api: k8s.CustomObjectsApi;
  private readonly lastWritten = new Map<string, string>();
  private readonly writes: CoalescedWrites<Scan>;

  constructor(private readonly options: ScanStatusMirrorOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.writes = new CoalescedWrites({ write: (_scanId, scan) => this.write(scan), onError: options.onError });
  }

  /** Asks for the Scan's CR to show this state; returns at once. */
  update(scan: Scan): void {
    this.writes.request(scan.id, scan);
  }

  /** Resolves once every requested write has been attempted (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writes.flush();
  }

  private async write(scan: Scan): Promise<void> {
    const location = this.options.locate(scan.id);
    if (location === undefined) return;
    const status = scanStatusOf(scan);
    const text = JSON.stringify(status);
    if (this.lastWritten.get(scan.id) === text) return;
    if (!this.lastWritten.has(scan.id)) await this.ensureUnlessForbidden(scan, location.namespace);
    try {
      await this.api.patchNamespacedCustomObjectStatus(
        { group: SCAN_GROUP, version: SCAN_VERSION, namespace: location.namespace, plural: SCAN_PLURAL, name: scan.name, body: { status } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.lastWritten.delete(scan.id); // deleted with kubectl: nothing to show it on
      return;
    }
    this.lastWritten.set(scan.id, text);
  }

  /**
   * In a namespace Vigil may not write to (missing from the chart's tenants)
   * the CR cannot be created; but one applied with kubectl exists, and the
   * cluster-wide status patch still shows its owner why the Scan failed.
   */
  private async ensureUnlessForbidden(scan: Scan, namespace: string): Promise<void> {
    try {
      await this.options.scanResources.ensure(scan, namespace);
    } catch (error) {
      if (!isForbidden(error)) throw error;
    }
  }
}

/** A ScanRepository that tells the mirror about every Scan it writes; reads pass straight through. */
export class MirroredScanRepository implements ScanRepository {
  constructor(
    private readonly inner: ScanRepository,
    private readonly mirror: ScanStatusMirror,
  ) {}

  insert(scans: readonly Scan[], events: readonly OutboxEvent[]): void {
    this.inner.insert(scans, events);
    for (const scan of scans) this.mirror.update(scan);
  }

  insertImported(scan: Scan, files: readonly StoredResultFile[]): void {
    this.inner.insertImported(scan, files);
    this.mirror.update(scan);
  }

  save(scan: Scan, events: readonly OutboxEvent[], expectedState?: ScanState): boolean {
    const saved = this.inner.save(scan, events, expectedState);
    if (saved) this.mirror.update(scan);
    return saved;
  }

  saveWithResults(scan: Scan, files: readonly StoredResultFile[], events: readonly OutboxEvent[], expectedState: ScanState): boolean {
    const saved = this.inner.saveWithResults(scan, files, events, expectedState);
    if (saved) this.mirror.update(scan);
    return saved;
  }

  findById = (accountId: string, id: string) => this.inner.findById(accountId, id);
  findByIdUnscoped = (id: string) => this.inner.findByIdUnscoped(id);
  findByName = (accountId: string, name: string) => this.inner.findByName(accountId, name);
  delete = (accountId: string, id: string) => this.inner.delete(accountId, id);
  list = (accountId: string, query: ScanListQuery) => this.inner.list(accountId, query);
  idsInStates = (states: readonly ScanState[], limit?: number) => this.inner.idsInStates(states, limit);
  countInState = (state: ScanState) => this.inner.countInState(state);
  monthlyUsage = (accountId: string, month: string) => this.inner.monthlyUsage(accountId, month);
  findResult = (accountId: string, id: string) => this.inner.findResult(accountId, id);
  eventsFor = (accountId: string) => this.inner.eventsFor(accountId);
}
