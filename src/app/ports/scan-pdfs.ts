import type { Writable } from 'node:stream';
import type { ScanPdfModel } from '../../domain/reports/scan-pdf-model.js';
import type { ReportRisk, ReportTarget } from '../../domain/reports/snapshot.js';

/** A result file whose bytes are still to be made (migration 0020): a scan's PDF. */
export interface PendingResultFile {
  resultId: string;
  scanId: string;
  accountId: string;
}

/** A risk's place in severity order: threat level (0 critical .. 4 info), then the newest first (seq). */
export interface RiskSeverityKey {
  id: string;
  level: number;
  seq: number;
}

/** What a scan's PDF reads, and its pending marker. */
export interface ScanPdfRepository {
  /** Every result file still to be made, oldest first (start-up renders them). */
  pending(): PendingResultFile[];
  isPending(resultId: string): boolean;
  /**
   * The file is on disk: its size and hash go on its row and the marker goes,
   * in one transaction. False when the row is gone (the scan was deleted).
   */
  markRendered(resultId: string, size: number, sha256: string): boolean;
  /** The account's targets with these ids (at most a few hundred), as a report holds them. */
  targets(accountId: string, ids: readonly string[]): ReportTarget[];
  /** Severity keys of the account's risks with these ids (at most SQLite's variable limit per call). */
  severityKeys(accountId: string, ids: readonly string[]): RiskSeverityKey[];
  /** The account's risks with these ids (same limit), as a report holds them. */
  risks(accountId: string, ids: readonly string[]): ReportRisk[];
}

/** Writes a scan's PDF and ends `out` (an adapter: pdfkit). */
export type ScanPdfRenderer = (model: ScanPdfModel, out: Writable) => Promise<void>;
