/**
 * What the PDF of one SUCCEEDED scan says (issue 26): its targets, then its
 * `new_open`, `still_open` and `closed` risks, each list by target with the
 * most severe first, as a report shows them. At most SCAN_PDF_LIMITS.maxRisks
 * risks in all, so the PDF stays a readable size; when more were found, the
 * PDF says so and where the whole lists are.
 */
import type { ScanType } from '../risks/finding.js';
import { byHealthWorstFirst, sectionsOf, summaryOf, type ReportSection, type ReportSummary } from './report-model.js';
import type { ReportRisk, ReportTarget } from './snapshot.js';

export const SCAN_PDF = { fileName: 'scan-report.pdf', contentType: 'application/pdf' } as const;

export const SCAN_PDF_LIMITS = {
  /**
   * Risks one scan's PDF holds: about a third of a page each, so about 100
   * pages, rendered in about a second (bench/reports.ts renders 10,000 in
   * seconds). The new open risks come first, then the still open, then the
   * closed, the most severe first within each list.
   */
  maxRisks: 300,
} as const;

export const SCAN_RISK_LISTS = [
  { key: 'newOpen', field: 'new_open', title: 'New open risks', anchor: 'new-open', none: 'This scan found no risk that was new on its targets.' },
  { key: 'stillOpen', field: 'still_open', title: 'Still open risks', anchor: 'still-open', none: 'This scan found no risk that an earlier scan had found.' },
  { key: 'closed', field: 'closed', title: 'Closed risks', anchor: 'closed', none: 'This scan closed no risk.' },
] as const;

export type ScanRiskList = (typeof SCAN_RISK_LISTS)[number]['key'];

export interface ScanPdfSnapshot {
  scan: { id: string; name: string; type: ScanType; createdAt: string; finishedAt: string | null };
  accountName: string;
  /** When the PDF was made. */
  createdAt: string;
  /** The targets the scan covered. */
  targets: ReportTarget[];
  /** Targets the scan did not reach, with why. */
  skipped: Array<{ target: string; reason: string }>;
  /** The risks the PDF holds, by list: at most maxRisks in all. */
  risks: Record<ScanRiskList, ReportRisk[]>;
  /** How many risks each list of the scan has. */
  counts: Record<ScanRiskList, number>;
  maxRisks: number;
}

export interface ScanPdfPart {
  list: (typeof SCAN_RISK_LISTS)[number];
  sections: ReportSection[];
  shown: number;
  total: number;
}

export interface ScanPdfModel {
  snapshot: ScanPdfSnapshot;
  /** The risks found (new and still open) for the tiles and charts; targets' grades. */
  summary: ReportSummary;
  targets: ReportTarget[];
  parts: ScanPdfPart[];
  truncated: boolean;
}

export function buildScanPdfModel(snapshot: ScanPdfSnapshot): ScanPdfModel {
  const targets = byHealthWorstFirst(snapshot.targets);
  const parts = SCAN_RISK_LISTS.map((list) => ({
    list,
    sections: sectionsOf(targets, snapshot.risks[list.key]),
    shown: snapshot.risks[list.key].length,
    total: snapshot.counts[list.key],
  }));
  return {
    snapshot,
    summary: summaryOf([...snapshot.risks.newOpen, ...snapshot.risks.stillOpen], targets),
    targets,
    parts,
    truncated: parts.some((part) => part.shown < part.total),
  };
}

/**
 * How many of each list's risks the PDF holds under the cap: the new open
 * first, then the still open, then the closed.
 */
export function scanPdfShares(counts: Record<ScanRiskList, number>, maxRisks: number): Record<ScanRiskList, number> {
  let left = maxRisks;
  const shares = { newOpen: 0, stillOpen: 0, closed: 0 };
  for (const { key } of SCAN_RISK_LISTS) {
    shares[key] = Math.min(counts[key], left);
    left -= shares[key];
  }
  return shares;
}

/** The PDF's note when it holds fewer risks than the scan has, saying where the rest are. */
export function truncationNote(model: ScanPdfModel): string {
  const found = model.parts.reduce((sum, part) => sum + part.total, 0);
  const shown = model.parts.reduce((sum, part) => sum + part.shown, 0);
  const { id } = model.snapshot.scan;
  return (
    `This PDF was cut: it holds ${shown} of the scan's ${found} risks (at most ${model.snapshot.maxRisks}: the new open first, then the still open, then the closed, the most severe first). ` +
    `The scan's whole lists of risk ids are in GET /v1/scans/${id} (risks.new_open, risks.still_open, risks.closed); each risk is at GET /v1/risks/{id}, ` +
    `and a report of every risk of its targets comes from POST /v1/reports (report_format CSV, PDF or HTML, targets_filter.target_ids).`
  );
}
