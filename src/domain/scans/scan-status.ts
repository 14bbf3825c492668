/** The Scan CR's status from the domain Scan (DESIGN.md decision 2: counts, not risk lists). */
import type { ScanStatus } from './scan-resource.js';
import type { Scan } from './scan.js';

export function scanStatusOf(scan: Scan): ScanStatus {
  return {
    scanId: scan.id,
    state: scan.state,
    progress: scan.progress,
    isAuthenticated: scan.isAuthenticated,
    resolvedTargets: scan.resolvedTargets,
    skippedTargets: scan.skippedTargets,
    counts: { newOpen: scan.risks.newOpen.length, stillOpen: scan.risks.stillOpen.length, closed: scan.risks.closed.length },
    conditions: scan.conditions,
    ...(scan.startedAt === null ? {} : { startedAt: scan.startedAt }),
    ...(scan.finishedAt === null ? {} : { finishedAt: scan.finishedAt }),
  };
}
