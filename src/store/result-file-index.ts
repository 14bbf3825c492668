/**
 * Which files under the data directory rows reference, for the start-up sweep.
 * Which result files rows reference, as "<scan id>/<file name>" keys, for the start-up sweep of the data directory. */
import type { Database } from './database.js';

export function referencedResultFiles(db: Database): Set<string> {
  const rows = db.prepare('SELECT scan_id AS scanId, file_name AS fileName FROM scan_results WHERE content IS NULL').all() as Array<{
    scanId: string;
    fileName: string;
  }>;
  return new Set(rows.map((row) => `${row.scanId}/${row.fileName}`));
}

/** The ids of every report with a row, for the start-up sweep of the reports folder. */
export function recordedReports(db: Database): Set<string> {
  return new Set(db.prepare('SELECT id FROM reports').pluck().all() as string[]);
}
