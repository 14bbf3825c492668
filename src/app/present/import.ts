import type { ImportedResult } from '../imports-service.js';

/** A file with thousands of private hosts would otherwise list them all. */
const MAX_LISTED_SKIPPED_HOSTS = 100;

/** The API shape of an upload's outcome (the ImportedResult schema). */
export function presentImport(imported: ImportedResult) {
  const { scan } = imported;
  return {
    scan_id: scan.id,
    source_id: imported.source.id,
    scan_type: scan.type,
    targets: imported.targets.map((target) => ({ target_id: target.id, target: target.target })),
    skipped_hosts: imported.skippedHosts.slice(0, MAX_LISTED_SKIPPED_HOSTS),
    risks: { new_open: scan.risks.newOpen.length, still_open: scan.risks.stillOpen.length, closed: scan.risks.closed.length },
  };
}
