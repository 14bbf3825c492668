/**
 * The PDF of each SUCCEEDED scan (issue 26). Its result row is written with
 * the scan's final state, in the transaction that records SUCCEEDED, marked
 * pending (migration 0020), so the scan.updated event and every read of the
 * scan list it; the PDF is rendered right after that commit, as a stream
 * into the result files store (a temporary file, synced, renamed into place),
 * and only then does the row get its size and lose its mark. A crash in
 * between leaves the mark (and at most a temporary file, swept at start-up):
 * start-up renders every marked PDF again, and a download that arrives first
 * renders it (or waits for the rendering under way) before sending it.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Clock } from '../domain/clock.js';
import {
  buildScanPdfModel,
  scanPdfShares,
  SCAN_PDF,
  SCAN_PDF_LIMITS,
  SCAN_RISK_LISTS,
  type ScanPdfSnapshot,
  type ScanRiskList,
} from '../domain/reports/scan-pdf-model.js';
import type { ReportRisk } from '../domain/reports/snapshot.js';
import type { Scan, ScanSummary } from '../domain/scans/scan.js';
import { idSlices, riskListRuns } from './scan-list-runs.js';
import type { AccountRepository, NewResultFile, PendingResultFile, ResultFileStore, ScanPdfRenderer, ScanPdfRepository, ScanRepository } from './ports.js';

export interface ScanPdfsOptions {
  repository: ScanPdfRepository;
  scans: Pick<ScanRepository, 'findSummary' | 'riskListIds'>;
  accounts: Pick<AccountRepository, 'findById'>;
  resultFiles: ResultFileStore;
  render: ScanPdfRenderer;
  clock: Clock;
  /** SCAN_PDF_LIMITS.maxRisks; tests pass a smaller one. */
  maxRisks?: number;
}

export class ScanPdfs {
  /** Renderings in progress by result id: a download waits for the one under way instead of starting another. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /**
   * One rendering at a time, in arrival order: a burst of finishing scans
   * renders one after another rather than all at once (each holds its
   * risks and a page's drawing in memory while it runs).
   */
  private queue: Promise<unknown> = Promise.resolve();
  private reportError: (file: PendingResultFile, error: unknown) => void = () => undefined;

  constructor(private readonly options: ScanPdfsOptions) {}

  /** Where a failed rendering is reported (the log); its mark stays, so the next start (or a download) tries again. */
  onError(report: (file: PendingResultFile, error: unknown) => void): void {
    this.reportError = report;
  }

  /** The PDF's result row, for the transaction that records the scan SUCCEEDED; its bytes come after (renderSoon). */
  resultFor(scan: Scan, createdAt: string): NewResultFile {
    return {
      id: randomUUID(),
      scanId: scan.id,
      accountId: scan.accountId,
      fileName: SCAN_PDF.fileName,
      contentType: SCAN_PDF.contentType,
      size: 0,
      sha256: '',
      createdAt,
      rendersLater: true,
    };
  }

  /** Renders the PDF once its row is committed; a failure is reported and left for the next start or download. */
  renderSoon(file: PendingResultFile): void {
    this.ensureRendered(file).catch((error: unknown) => this.reportError(file, error));
  }

  /** Start-up: the PDFs a crash (or a failed rendering) left to be made. */
  renderPending(): void {
    for (const file of this.options.repository.pending()) this.renderSoon(file);
  }

  /** Shutdown: resolves once the renderings queued so far are done (failed ones keep their mark for the next start). */
  async idle(): Promise<void> {
    await this.queue;
  }

  isPending(resultId: string): boolean {
    return this.options.repository.isPending(resultId);
  }

  /** Resolves once the PDF is on disk under its name: at once when it is, else after the rendering under way or a new one. */
  ensureRendered(file: PendingResultFile): Promise<void> {
    const running = this.inFlight.get(file.resultId);
    if (running !== undefined) return running;
    const run = async () => {
      if (this.options.repository.isPending(file.resultId)) await this.renderNow(file);
    };
    const rendering = this.queue.then(run, run).finally(() => this.inFlight.delete(file.resultId));
    this.queue = rendering.catch(() => undefined);
    this.inFlight.set(file.resultId, rendering);
    return rendering;
  }

  private async renderNow(file: PendingResultFile): Promise<void> {
    const scan = this.options.scans.findSummary(file.accountId, file.scanId);
    if (scan === undefined || scan.state !== 'SUCCEEDED') return; // deleted meanwhile: its rows went with it
    const model = buildScanPdfModel(await this.snapshotOf(scan));
    const out = new PassThrough();
    const saving = this.options.resultFiles.save(scan.id, SCAN_PDF.fileName, out);
    // A failed rendering ends the stream with its error, so the save discards its temporary file rather than publishing half a PDF.
    const rendering = this.options.render(model, out).catch((error: unknown) => {
      out.destroy(error as Error);
      throw error;
    });
    let saved: { size: number; sha256: string };
    try {
      [, saved] = await Promise.all([rendering, saving]);
    } catch (error) {
      // Deleting the scan meanwhile removes its folder under the file being written: not a failure, nothing is left to make.
      if (this.options.scans.findSummary(scan.accountId, scan.id) !== undefined) throw error;
      return this.options.resultFiles.removeScan(scan.id);
    }
    if (!this.options.repository.markRendered(file.resultId, saved.size, saved.sha256)) {
      // The scan was deleted while its PDF was made: its folder goes, as the deletion removed it.
      await this.options.resultFiles.removeScan(scan.id);
    }
  }

  private async snapshotOf(scan: ScanSummary): Promise<ScanPdfSnapshot> {
    const maxRisks = this.options.maxRisks ?? SCAN_PDF_LIMITS.maxRisks;
    const counts = { ...scan.riskCounts };
    const shares = scanPdfShares(counts, maxRisks);
    const risks: Record<ScanRiskList, ReportRisk[]> = { newOpen: [], stillOpen: [], closed: [] };
    for (const { key } of SCAN_RISK_LISTS) {
      if (shares[key] === 0) continue;
      risks[key] = await this.risksOf(scan.accountId, await this.mostSevere(scan.accountId, await this.listIds(scan, key), shares[key]));
    }
    const requested = new Map(scan.requestedTargets.map((target) => [target.targetId, target.target]));
    return {
      scan: { id: scan.id, name: scan.name, type: scan.type, createdAt: scan.createdAt, finishedAt: scan.finishedAt },
      accountName: this.options.accounts.findById(scan.accountId)?.name ?? scan.accountId,
      createdAt: this.options.clock.now().toISOString(),
      targets: this.options.repository.targets(
        scan.accountId,
        scan.resolvedTargets.map((target) => target.targetId),
      ),
      skipped: scan.skippedTargets.map((skipped) => ({ target: requested.get(skipped.targetId) ?? skipped.targetId, reason: skipped.skippedReason })),
      risks,
      counts,
      maxRisks,
    };
  }

  /** One of the scan's risk lists, read a run a turn (riskListRuns). */
  private async listIds(scan: ScanSummary, list: ScanRiskList): Promise<string[]> {
    const ids: string[] = [];
    for await (const run of riskListRuns(this.options.scans, scan, list)) for (const id of run) ids.push(id);
    return ids;
  }

  /** The `share` most severe of the ids (all of them when they fit), read a slice at a time with a turn of the event loop between slices. */
  private async mostSevere(accountId: string, ids: readonly string[], share: number): Promise<readonly string[]> {
    if (ids.length <= share) return ids;
    if (share === 0) return [];
    const keys = [];
    for await (const slice of idSlices(ids)) keys.push(...this.options.repository.severityKeys(accountId, slice));
    keys.sort((a, b) => a.level - b.level || b.seq - a.seq);
    return keys.slice(0, share).map((key) => key.id);
  }

  private async risksOf(accountId: string, ids: readonly string[]): Promise<ReportRisk[]> {
    const risks: ReportRisk[] = [];
    for await (const slice of idSlices(ids)) risks.push(...this.options.repository.risks(accountId, slice));
    return risks;
  }
}
