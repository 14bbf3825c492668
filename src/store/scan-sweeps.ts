/**
 * ScanSweeps on SQLite (migration 0029): a deleted scan's detections and risk
 * lists, which no longer cascade from its row, deleted a bounded range of
 * their primary key at a time.
 */
import type { ScanSweeps } from '../app/ports.js';
import type { Database } from './database.js';

/** Written by the Scan repository in the transaction that deletes the scan's row, before it goes (its seq keys the risk lists). */
export const JOURNAL_SWEEP = 'INSERT OR IGNORE INTO pending_scan_sweeps (scan_id, scan_seq) SELECT id, seq FROM scans WHERE account_id = ? AND id = ?';

export class SqliteScanSweeps implements ScanSweeps {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      seqOf: db.prepare('SELECT scan_seq FROM pending_scan_sweeps WHERE scan_id = ?').pluck(),
      // The scan's first `limit` detections by key, as one range of the primary key.
      detections: db.prepare(`DELETE FROM detections WHERE scan_id = @scanId
        AND risk_id <= (SELECT max(risk_id) FROM (SELECT risk_id FROM detections WHERE scan_id = @scanId ORDER BY risk_id LIMIT @limit))`),
      // From its first remaining entry, `limit` positions of the same list at most: positions are distinct integers.
      firstRisk: db.prepare('SELECT list, position FROM scan_risks WHERE scan_seq = ? ORDER BY list, position LIMIT 1'),
      risks: db.prepare('DELETE FROM scan_risks WHERE scan_seq = ? AND list = ? AND position >= ? AND position < ?'),
      done: db.prepare('DELETE FROM pending_scan_sweeps WHERE scan_id = ?'),
      scans: db.prepare('SELECT scan_id FROM pending_scan_sweeps ORDER BY rowid').pluck(),
    };
  }

  sweep(scanId: string, limit: number): boolean {
    const seq = this.statements.seqOf.get(scanId) as number | undefined;
    if (seq === undefined) return false;
    if (this.statements.detections.run({ scanId, limit }).changes > 0) return true;
    const first = this.statements.firstRisk.get(seq) as { list: number; position: number } | undefined;
    if (first !== undefined) return this.statements.risks.run(seq, first.list, first.position, first.position + limit).changes > 0;
    this.statements.done.run(scanId);
    return false;
  }

  scans(): string[] {
    return this.statements.scans.all() as string[];
  }
}
