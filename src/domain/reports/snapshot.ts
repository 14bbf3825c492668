/**
 * A report's snapshot (SPEC.md, Reports): the targets and risks it holds,
 * read once when the report is created. Every download, in any format, is
 * rendered from it, so a later download shows the same risks even after new
 * scans, acceptances or deletions.
 */
import type { HealthScore } from '../targets/health-score.js';
import type { RiskDefinition } from '../risks/finding.js';
import type { RiskStatus } from '../risks/risk.js';

export const REPORT_FORMATS = ['PDF', 'HTML', 'CSV'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** targets_filter keys: values within a key are alternatives, keys combine with AND, as in lists. */
export const REPORT_TARGET_FILTER_KEYS = ['target_ids', 'tags', 'label'] as const;
export type ReportTargetFilterKey = (typeof REPORT_TARGET_FILTER_KEYS)[number];

export const REPORT_LIMITS = {
  /**
   * Risks one report holds. When more match, the report keeps the most
   * severe ones and says on its cover how many matched: a 10,000-risk PDF of
   * typical scanner text is over 3,000 pages already, and takes seconds to render (bench/reports.ts).
   */
  maxRisks: 10_000,
  /** Targets one report may cover; more gives 400, asking for a narrower targets_filter. */
  maxTargets: 10_000,
  /** Characters of a filters value, and of the filename query parameter. */
  maxFilterValueLength: 2048,
  maxFilenameLength: 200,
  /** Characters of a risk's description and of its solution in a report; the API has the whole text. */
  maxTextChars: 8_000,
} as const;

/** A risk's text as a report holds it: at most REPORT_LIMITS.maxTextChars, saying so when cut. */
export function reportText(text: string): string {
  if (text.length <= REPORT_LIMITS.maxTextChars) return text;
  return `${text.slice(0, REPORT_LIMITS.maxTextChars)}… (cut at ${REPORT_LIMITS.maxTextChars} characters; GET /v1/risks/{id} has the whole text)`;
}

/** The filters as the request sent them, after validation: shown on the report's cover. */
export interface ReportFilters {
  targets_filter: Partial<Record<string, string[]>>;
  risks_filter: Partial<Record<string, string[]>>;
}

export interface ReportTarget {
  id: string;
  target: string;
  label: string;
  tags: string[];
  healthScore: HealthScore;
  /** Null for a target never scanned: its perfect score says nothing yet. Absent in snapshots stored before this field. */
  lastScannedAt?: string | null;
}

export interface ReportRisk {
  id: string;
  targetId: string;
  status: RiskStatus;
  isAccepted: boolean;
  firstDetectedAt: string;
  lastDetectedAt: string;
  definition: RiskDefinition;
}

export interface ReportSnapshot {
  /** Bumped when the stored shape changes, so old snapshots are read correctly. */
  version: 1;
  id: string;
  accountName: string;
  createdAt: string;
  format: ReportFormat;
  filters: ReportFilters;
  targets: ReportTarget[];
  /** The risks the report holds: the most severe first, at most REPORT_LIMITS.maxRisks. */
  risks: ReportRisk[];
  /** How many risks matched the filters, counted to one past the cap; more than risks.length when the report was truncated. */
  matchedRisks: number;
}

export const CONTENT_TYPES: Readonly<Record<ReportFormat, string>> = {
  PDF: 'application/pdf',
  HTML: 'text/html; charset=utf-8',
  CSV: 'text/csv; charset=utf-8',
};

export const EXTENSIONS: Readonly<Record<ReportFormat, string>> = { PDF: 'pdf', HTML: 'html', CSV: 'csv' };

/**
 * The download's file name: what the caller asked for, reduced to characters
 * that are safe inside a quoted Content-Disposition filename on every
 * client, with the format's extension (replacing one the caller gave).
 */
export function downloadFileName(requested: string | undefined, format: ReportFormat, createdAt: string): string {
  const extension = EXTENSIONS[format];
  const safe = (requested ?? '')
    .normalize('NFKD')
    // Accents come apart under NFKD; dropping the marks keeps 'Prüfbericht' readable as 'Prufbericht'.
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._ -]+/g, '_')
    .replace(/\.(pdf|html?|csv)$/i, '')
    .replace(/^[ ._-]+|[ ._]+$/g, '')
    .slice(0, REPORT_LIMITS.maxFilenameLength);
  const stem = safe === '' ? `vigil-report-${createdAt.slice(0, 10)}` : safe;
  return `${stem}.${extension}`;
}
