import type { Scan } from '../../domain/scans/scan.js';

/** The API shape of a Scan (SPEC.md field names); also the `data` of scan events. */
export function presentScan(scan: Scan) {
  return {
    id: scan.id,
    type: scan.type,
    state: scan.state,
    progress: scan.progress,
    is_authenticated: scan.isAuthenticated,
    risks: {
      new_open: scan.risks.newOpen.map((risk_id) => ({ risk_id })),
      still_open: scan.risks.stillOpen.map((risk_id) => ({ risk_id })),
      closed: scan.risks.closed.map((risk_id) => ({ risk_id })),
    },
    results: scan.state === 'SUCCEEDED' ? scan.results.map((file) => ({ result_id: file.resultId, content_type: file.contentType })) : [],
    requested_targets: scan.requestedTargets.map((target) => ({ target_id: target.targetId, target: target.target })),
    resolved_targets: scan.resolvedTargets.map((target) => ({ target_id: target.targetId, target: target.target, addresses: target.addresses })),
    skipped_targets: scan.skippedTargets.map((target) => ({ target_id: target.targetId, skipped_reason: target.skippedReason })),
    created_at: scan.createdAt,
    started_at: scan.startedAt,
    finished_at: scan.finishedAt,
    scheduled_by: scan.scheduledBy,
    report_id: scan.reportId,
    conditions: scan.conditions,
  };
}

export type ScanJson = ReturnType<typeof presentScan>;
