/** ScanResourceMarks on SQLite (migration 0020): the deletions through the API and the resources Vigil expired. */
import type { Database } from './database.js';
import type { FinishedScan, ScanResourceMarks } from '../app/ports.js';

/** Deletions remembered at most, for resources still to delete (a bound: the Kubernetes runtime forgets each once its resource is gone). */
const KEPT_DELETIONS = 10_000;
/** Written by the Scan and ScheduledScan repositories in the transaction that deletes the record. */
export const RECORD_DELETION = 'INSERT OR REPLACE INTO record_deletions (record_id, deleted_at) VALUES (?, ?)';
export const PRUNE_DELETIONS = `DELETE FROM record_deletions WHERE seq <= (SELECT MAX(seq) FROM record_deletions) - ${KEPT_DELETIONS}`;

export class SqliteScanResourceMarks implements ScanResourceMarks {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      deleted: db.prepare('SELECT 1 FROM record_deletions WHERE record_id = ?'),
      forget: db.prepare('DELETE FROM record_deletions WHERE record_id = ?'),
      expire: db.prepare('INSERT OR IGNORE INTO scan_resources_expired (scan_id, expired_at) VALUES (?, ?)'),
      expired: db.prepare('SELECT 1 FROM scan_resources_expired WHERE scan_id = ?'),
      finishedOf: db.prepare(`SELECT id, name, state FROM scans
        WHERE scheduled_by = ? AND finished_at IS NOT NULL AND state IN ('SUCCEEDED', 'FAILED', 'STOPPED', 'OVER_LIMIT')
          AND NOT EXISTS (SELECT 1 FROM scan_resources_expired WHERE scan_id = scans.id)
        ORDER BY finished_at DESC, seq DESC`),
    };
  }

  deletedThroughApi(scanId: string): boolean {
    return this.statements.deleted.get(scanId) !== undefined;
  }

  forgetDeletion(scanId: string): void {
    this.statements.forget.run(scanId);
  }

  markExpired(scanId: string, at: string): void {
    this.statements.expire.run(scanId, at);
  }

  isExpired(scanId: string): boolean {
    return this.statements.expired.get(scanId) !== undefined;
  }

  finishedWithResources(scheduledScanId: string): FinishedScan[] {
    return this.statements.finishedOf.all(scheduledScanId) as FinishedScan[];
  }
}
