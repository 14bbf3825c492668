/**
 * A ScanRepository that tells the Scan reconciler about every Scan written or
 * deleted, so its CR converges at once rather than at the next full pass.
 * It only enqueues: the reconcile runs after the writing transaction (the
 * store is synchronous, the queue's workers are not), reads the row as
 * committed and the CR from the cache, and writes what differs.
 */
import type { OutboxEvent } from '../../domain/events/event.js';
import type { Scan, ScanState } from '../../domain/scans/scan.js';
import type { NewResultFile, ScanListQuery, ScanRepository, StoredResultFile } from '../../app/ports.js';

export class NotifyingScanRepository implements ScanRepository {
  constructor(
    private readonly inner: ScanRepository,
    private readonly changed: (scan: Scan) => void,
  ) {}

  insert(scans: readonly Scan[], events: readonly OutboxEvent[]): void {
    this.inner.insert(scans, events);
    for (const scan of scans) this.changed(scan);
  }

  insertImported(scan: Scan, files: readonly StoredResultFile[]): void {
    this.inner.insertImported(scan, files);
    this.changed(scan);
  }

  save(scan: Scan, events: readonly OutboxEvent[], expectedState?: ScanState): boolean {
    const saved = this.inner.save(scan, events, expectedState);
    if (saved) this.changed(scan);
    return saved;
  }

  saveWithResults(scan: Scan, files: readonly NewResultFile[], events: readonly OutboxEvent[], expectedState: ScanState): boolean {
    const saved = this.inner.saveWithResults(scan, files, events, expectedState);
    if (saved) this.changed(scan);
    return saved;
  }

  delete(accountId: string, id: string): boolean {
    const scan = this.inner.findById(accountId, id);
    const deleted = this.inner.delete(accountId, id);
    if (deleted && scan !== undefined) this.changed(scan);
    return deleted;
  }

  findById = (accountId: string, id: string) => this.inner.findById(accountId, id);
  findByIdUnscoped = (id: string) => this.inner.findByIdUnscoped(id);
  resultContent = (id: string) => this.inner.resultContent(id);
  findByName = (accountId: string, name: string) => this.inner.findByName(accountId, name);
  list = (accountId: string, query: ScanListQuery) => this.inner.list(accountId, query);
  idsInStates = (states: readonly ScanState[], limit?: number) => this.inner.idsInStates(states, limit);
  countInState = (state: ScanState) => this.inner.countInState(state);
  monthlyUsage = (accountId: string, month: string) => this.inner.monthlyUsage(accountId, month);
  findResult = (accountId: string, id: string) => this.inner.findResult(accountId, id);
  eventsFor = (accountId: string) => this.inner.eventsFor(accountId);
}
