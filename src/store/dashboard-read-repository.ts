/**
 * The dashboard's cross-resource reads. Counts are grouped in SQL so that a
 * page never loads an account's risks or targets to count them; links are
 * id lists with a limit.
 */
import type { DashboardReadRepository } from '../app/ports.js';
import type { ThreatLevel } from '../domain/risks/finding.js';
import type { GradeCounts, HealthGrade, OpenRiskCounts } from '../domain/targets/health-score.js';
import type { DailyChanges } from '../domain/trends/weekly-changes.js';
import type { Database } from './database.js';

const OPEN_RISK = "status = 'OPEN' AND is_accepted = 0 AND (scan_type <> 'OPENVAS' OR qod IS NULL OR qod >= ?)";

export class SqliteDashboardReadRepository implements DashboardReadRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      // Counters kept by triggers as risks change (migration 0026): a few rows whatever the account holds.
      openByLevel: db.prepare(`SELECT threat_level, SUM(n) AS n FROM open_risk_counts WHERE account_id = ? AND (gated = 0 OR qod >= ?)
        GROUP BY threat_level HAVING SUM(n) > 0`),
      // The SUCCEEDED scans' own diffs (SPEC.md new_open and closed), by the day the scan finished, kept by triggers (0026).
      dailyChanges: db.prepare('SELECT day, opened, closed FROM risk_changes_by_day WHERE account_id = ? AND day >= ? ORDER BY day'),
      // A target no scan has looked at has grade A by default: it is counted apart (grade NULL), not as A.
      byGrade: db.prepare(
        'SELECT CASE WHEN last_scanned_at IS NULL THEN NULL ELSE health_grade END AS grade, COUNT(*) AS n FROM targets WHERE account_id = ? GROUP BY 1',
      ),
      // requested_targets is JSON.stringify of {targetId, target} objects: the quoted key and id match one entry exactly.
      scansOfTarget: db.prepare('SELECT id FROM scans WHERE account_id = ? AND instr(requested_targets, ?) > 0 ORDER BY seq DESC LIMIT ?'),
      scansDetecting: db.prepare(`SELECT s.id FROM detections d JOIN scans s ON s.id = d.scan_id
        WHERE d.risk_id = ? AND s.account_id = ? ORDER BY s.seq DESC LIMIT ?`),
      nextScheduled: db.prepare(`SELECT id FROM scheduled_scans WHERE account_id = ? AND disabled = 0 AND next_run IS NOT NULL ORDER BY next_run, seq LIMIT ?`),
    };
  }

  openRisksByLevel(accountId: string, minOpenvasQod: number): OpenRiskCounts {
    const counts: OpenRiskCounts = {};
    for (const row of this.statements.openByLevel.all(accountId, minOpenvasQod) as Array<{ threat_level: ThreatLevel; n: number }>)
      counts[row.threat_level] = row.n;
    return counts;
  }

  dailyRiskChanges(accountId: string, since: string): DailyChanges[] {
    return this.statements.dailyChanges.all(accountId, since.slice(0, 10)) as DailyChanges[];
  }

  targetsByGrade(accountId: string): GradeCounts {
    const counts: GradeCounts = { byGrade: {}, notScanned: 0 };
    for (const row of this.statements.byGrade.all(accountId) as Array<{ grade: HealthGrade | null; n: number }>) {
      if (row.grade === null) counts.notScanned = row.n;
      else counts.byGrade[row.grade] = row.n;
    }
    return counts;
  }

  /** The unary + keeps the planner on risks_by_target_seq: an index led by account_id also matches and would walk the whole account. */
  openRisksOfTargets(accountId: string, targetIds: readonly string[], minOpenvasQod: number): Map<string, OpenRiskCounts> {
    const counts = new Map<string, OpenRiskCounts>();
    if (targetIds.length === 0) return counts;
    const rows = this.db
      .prepare(
        `SELECT target_id, threat_level, COUNT(*) AS n FROM risks
        WHERE target_id IN (${targetIds.map(() => '?').join(', ')}) AND +account_id = ? AND ${OPEN_RISK} GROUP BY target_id, threat_level`,
      )
      .all(...targetIds, accountId, minOpenvasQod) as Array<{ target_id: string; threat_level: ThreatLevel; n: number }>;
    for (const row of rows) counts.set(row.target_id, { ...counts.get(row.target_id), [row.threat_level]: row.n });
    return counts;
  }

  scanIdsOfTarget(accountId: string, targetId: string, limit: number): string[] {
    const needle = `"targetId":${JSON.stringify(targetId)}`;
    return (this.statements.scansOfTarget.all(accountId, needle, limit) as Array<{ id: string }>).map((row) => row.id);
  }

  scanIdsDetecting(accountId: string, riskId: string, limit: number): string[] {
    return (this.statements.scansDetecting.all(riskId, accountId, limit) as Array<{ id: string }>).map((row) => row.id);
  }

  nextScheduledIds(accountId: string, limit: number): string[] {
    return (this.statements.nextScheduled.all(accountId, limit) as Array<{ id: string }>).map((row) => row.id);
  }
}
