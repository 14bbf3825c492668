/**
 * A report's stored record. Moved from src/app/ports/reports.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
import type { ReportFilters, ReportFormat } from './snapshot.js';

/** A report's row: what it was made from; its snapshot and files are in ReportFiles. */
export interface ReportRecord {
  id: string;
  accountId: string;
  format: ReportFormat;
  filters: ReportFilters;
  riskCount: number;
  matchedRisks: number;
  targetCount: number;
  createdAt: string;
}
