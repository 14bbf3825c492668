import type { GradeCounts, OpenRiskCounts } from '../../domain/targets/health-score.js';
import type { DailyChanges } from '../../domain/trends/weekly-changes.js';

/**
 * What the dashboard reads across resources: account-wide counts and the
 * links between targets, scans and risks. Every query is scoped by account
 * and bounded (a limit, or a group by a handful of values) so that pages stay
 * fast on large accounts.
 */
export interface DashboardReadRepository {
  /** Open, unaccepted risks by threat level; OpenVAS risks below the QoD left out, as the risk list does. */
  openRisksByLevel(accountId: string, minOpenvasQod: number): OpenRiskCounts;
  /** Per UTC day since `since`: the risks scans saw for the first time (new_open) and the risks they closed. */
  dailyRiskChanges(accountId: string, since: string): DailyChanges[];
  /** Scanned targets by grade, and how many no scan has looked at yet. */
  targetsByGrade(accountId: string): GradeCounts;
  /** Open, unaccepted risks of each of the targets, by threat level (targets without any are left out). */
  openRisksOfTargets(accountId: string, targetIds: readonly string[], minOpenvasQod: number): Map<string, OpenRiskCounts>;
  /** The newest scans that were asked to scan the target, newest first. */
  scanIdsOfTarget(accountId: string, targetId: string, limit: number): string[];
  /** The scans that detected the risk, newest first. */
  scanIdsDetecting(accountId: string, riskId: string, limit: number): string[];
  /** Enabled schedules with a run left, soonest first. */
  nextScheduledIds(accountId: string, limit: number): string[];
}
