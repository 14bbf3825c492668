/**
 * What the dashboard shows beside the resources' own services: the
 * overview (risk by threat level and over time, targets by grade, latest
 * scans, next runs) and the links between targets, scans and risks. Every
 * read is scoped by account, like the rest of the services.
 */
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import type { ScanSummary } from '../domain/scans/scan.js';
import type { GradeCounts, OpenRiskCounts } from '../domain/targets/health-score.js';
import { trendStart, weeklyChanges, type WeeklyChanges } from '../domain/trends/weekly-changes.js';
import type { DashboardReadRepository, ScanRepository, ScheduledScan, ScheduledScanRepository } from './ports.js';

/** The weeks the trend covers, the current one included. */
export const TREND_WEEKS = 12;
const LATEST_SCANS = 5;
const NEXT_RUNS = 5;

export interface Overview {
  openRisks: OpenRiskCounts;
  weekly: WeeklyChanges[];
  targetsByGrade: GradeCounts;
  latestScans: ScanSummary[];
  nextRuns: ScheduledScan[];
}

export class DashboardService {
  constructor(
    private readonly read: DashboardReadRepository,
    private readonly scans: ScanRepository,
    private readonly scheduledScans: ScheduledScanRepository,
    private readonly clock: Clock,
  ) {}

  overview(account: Account): Overview {
    const now = this.clock.now();
    const days = this.read.dailyRiskChanges(account.id, trendStart(now, TREND_WEEKS).toISOString());
    return {
      openRisks: this.read.openRisksByLevel(account.id, account.minOpenvasQod),
      weekly: weeklyChanges(days, now, TREND_WEEKS),
      targetsByGrade: this.read.targetsByGrade(account.id),
      latestScans: this.scans.list(account.id, { filters: {}, pageSize: LATEST_SCANS, after: undefined }).items,
      nextRuns: this.idsToSchedules(account, this.read.nextScheduledIds(account.id, NEXT_RUNS)),
    };
  }

  /** Open, unaccepted risks by threat level of each listed target. */
  openRisksOfTargets(account: Account, targetIds: readonly string[]): Map<string, OpenRiskCounts> {
    return this.read.openRisksOfTargets(account.id, targetIds, account.minOpenvasQod);
  }

  /** The newest scans of a target (the caller has checked the target is the account's). */
  scansOfTarget(account: Account, targetId: string, limit: number): ScanSummary[] {
    return this.idsToScans(account, this.read.scanIdsOfTarget(account.id, targetId, limit));
  }

  /** The newest scans that detected a risk (the caller has checked the risk is the account's). */
  scansDetecting(account: Account, riskId: string, limit: number): ScanSummary[] {
    return this.idsToScans(account, this.read.scanIdsDetecting(account.id, riskId, limit));
  }

  /** Summaries, not whole scans: a table shows their lists' lengths, and each list can hold tens of thousands of ids. */
  private idsToScans(account: Account, ids: readonly string[]): ScanSummary[] {
    return ids.flatMap((id) => this.scans.findSummary(account.id, id) ?? []);
  }

  private idsToSchedules(account: Account, ids: readonly string[]): ScheduledScan[] {
    return ids.flatMap((id) => this.scheduledScans.findById(account.id, id) ?? []);
  }
}
