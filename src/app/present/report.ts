import type { ReportRecord } from '../../domain/reports/report-record.js';

/** A report as GET /v1/reports lists it (README, API decisions: the spec shows no fields beyond the id). */
export function presentReport({ record, size }: { record: ReportRecord; size: number | null }) {
  return {
    id: record.id,
    format: record.format,
    filters: record.filters,
    size,
    risk_count: record.riskCount,
    matched_risks: record.matchedRisks,
    target_count: record.targetCount,
    created_at: record.createdAt,
  };
}
