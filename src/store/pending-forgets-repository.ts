/**
 * The journal of the recompute a scan's deletion leaves (migration 0028):
 * the pairs its transaction writes, taken away as each chunk commits.
 */
import type { PendingForget, PendingForgets } from '../app/ports.js';
import type { ScanType } from '../domain/risks/finding.js';
import type { Database } from './database.js';

export class SqlitePendingForgets implements PendingForgets {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      add: db.prepare('INSERT INTO pending_scan_forgets (scan_id, account_id, target_id, scan_type) VALUES (?, ?, ?, ?)'),
      next: db.prepare(`SELECT seq, account_id AS accountId, target_id AS targetId, scan_type AS scanType FROM pending_scan_forgets
        WHERE scan_id = ? ORDER BY seq LIMIT ?`),
      remove: db.prepare('DELETE FROM pending_scan_forgets WHERE seq = ?'),
      scans: db.prepare('SELECT scan_id FROM pending_scan_forgets GROUP BY scan_id ORDER BY MIN(seq)').pluck(),
    };
  }

  add(scanId: string, accountId: string, pairs: ReadonlyArray<{ targetId: string; scanType: ScanType }>): void {
    for (const pair of pairs) this.statements.add.run(scanId, accountId, pair.targetId, pair.scanType);
  }

  next(scanId: string, limit: number): PendingForget[] {
    return this.statements.next.all(scanId, limit) as PendingForget[];
  }

  remove(seqs: readonly number[]): void {
    for (const seq of seqs) this.statements.remove.run(seq);
  }

  scans(): string[] {
    return this.statements.scans.all() as string[];
  }
}
