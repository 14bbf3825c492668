/** What a scan's PDF reads from the store (its targets and risks), and the markers of PDFs still to be made (migration 0020). */
import type { PendingResultFile, RiskSeverityKey, ScanPdfRepository } from '../app/ports.js';
import type { ReportRisk, ReportTarget } from '../domain/reports/snapshot.js';
import type { Database } from './database.js';
import { toReportRisk, toReportTarget, type ReportTargetRow, type ScopeRiskRow } from './reports-repository.js';
import { marks } from './risks-repository.js';

// Rows by id, checked against the account: +account_id keeps the planner off the account's indexes, which it took
// for `account_id = ?` without statistics and walked for every slice (a 40,020-risk scan's PDF: 3.3 s on the
// event loop among a million risks, bench/scale.ts).
const LEVEL_RANK_SQL = "CASE threat_level WHEN 'CRITICAL' THEN 0 WHEN 'HIGH' THEN 1 WHEN 'MEDIUM' THEN 2 WHEN 'LOW' THEN 3 ELSE 4 END";

export class SqliteScanPdfRepository implements ScanPdfRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      pending: db.prepare('SELECT result_id AS resultId, scan_id AS scanId, account_id AS accountId FROM pending_result_files ORDER BY created_at, rowid'),
      isPending: db.prepare('SELECT 1 FROM pending_result_files WHERE result_id = ?'),
      setFile: db.prepare('UPDATE scan_results SET size = ?, sha256 = ? WHERE id = ?'),
      done: db.prepare('DELETE FROM pending_result_files WHERE result_id = ?'),
    };
  }

  pending(): PendingResultFile[] {
    return this.statements.pending.all() as PendingResultFile[];
  }

  isPending(resultId: string): boolean {
    return this.statements.isPending.get(resultId) !== undefined;
  }

  markRendered(resultId: string, size: number, sha256: string): boolean {
    return this.db.transaction(() => {
      this.statements.done.run(resultId);
      return this.statements.setFile.run(size, sha256, resultId).changes > 0;
    })();
  }

  targets(accountId: string, ids: readonly string[]): ReportTarget[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT id, target, label, tags, health_score, health_grade, last_scanned_at FROM targets WHERE +account_id = ? AND id IN (${marks(ids.length)}) ORDER BY seq`,
      )
      .all(accountId, ...ids) as ReportTargetRow[];
    return rows.map(toReportTarget);
  }

  severityKeys(accountId: string, ids: readonly string[]): RiskSeverityKey[] {
    if (ids.length === 0) return [];
    return this.db
      .prepare(`SELECT id, ${LEVEL_RANK_SQL} AS level, seq FROM risks WHERE +account_id = ? AND id IN (${marks(ids.length)})`)
      .all(accountId, ...ids) as RiskSeverityKey[];
  }

  risks(accountId: string, ids: readonly string[]): ReportRisk[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT id, target_id, status, is_accepted, first_detected_at, last_detected_at, definition FROM risks WHERE +account_id = ? AND id IN (${marks(ids.length)})`,
      )
      .all(accountId, ...ids) as ScopeRiskRow[];
    return rows.map(toReportRisk);
  }
}
