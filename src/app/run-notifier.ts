/**
 * E-mail notifications of scheduled runs (SPEC.md email_notification). A run
 * owes its e-mail once every Scan it created is terminal; the notifier looks
 * at owing runs, decides (NEVER, ALWAYS, ON_CHANGES), sends through the
 * Mailer and records the outcome. A failed send is retried on a schedule and
 * logged; the run and its Scans are never affected by mail trouble.
 */
import type { Clock } from '../domain/clock.js';
import { isTerminal, type ScanSummary } from '../domain/scans/scan.js';
import {
  MAX_EMAIL_ATTEMPTS,
  countByThreat,
  nextEmailAttemptAt,
  shouldSendEmail,
  type RunRisk,
  type RunSummary,
  type TargetChanges,
} from '../domain/schedules/scheduled-run.js';
import type { TimerHandle, Timers } from './controller/timer.js';
import { renderRunEmail } from './notifications/run-email.js';
import type { Mailer, RiskRepository, ScanRepository, ScheduledRun, ScheduledRunRepository } from './ports.js';
import { idSlices, riskListRuns } from './scan-list-runs.js';

export interface RunNotifierOptions {
  runs: ScheduledRunRepository;
  scans: Pick<ScanRepository, 'findSummary' | 'riskListIds'>;
  risks: Pick<RiskRepository, 'changedRisks'>;
  mailer: Mailer;
  clock: Clock;
  timers: Timers;
  publicUrl: string;
  onSent?: (run: ScheduledRun) => void;
  onFailed?: (run: ScheduledRun, error: unknown, willRetry: boolean) => void;
  /** How often owing runs are looked at. */
  intervalMs?: number;
}

export type NotificationOutcome = 'WAITING' | ScheduledRun['notification'];

export class RunNotifier {
  private timer: TimerHandle | undefined;
  private stopped = true;
  private pass: Promise<void> = Promise.resolve();

  constructor(private readonly options: RunNotifierOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer);
    await this.pass;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.options.timers.setTimeout(() => {
      this.pass = this.tick()
        .catch(() => undefined)
        .finally(() => this.schedule(this.options.intervalMs ?? 5000));
    }, delayMs);
  }

  /** One pass over the runs whose notification is due; resolves when their sends are done. */
  async tick(): Promise<void> {
    const owing = this.options.runs.pendingNotifications(this.options.clock.now().toISOString(), 20);
    for (const run of owing) await this.notify(run);
  }

  /** Sends (or decides not to send) one run's e-mail; WAITING while a Scan of it is still going. */
  async notify(run: ScheduledRun): Promise<NotificationOutcome> {
    const scans = run.scanIds.flatMap((id) => this.options.scans.findSummary(run.accountId, id) ?? []);
    if (scans.some((scan) => !isTerminal(scan.state))) return 'WAITING';
    const summary = await this.summarize(run, scans);
    if (!shouldSendEmail(run.emailNotification, run.emailTo, summary)) return this.save(run, 'NOT_NEEDED', run.emailAttempts, null);
    try {
      await this.options.mailer.send(renderRunEmail(run, summary, this.options.publicUrl));
    } catch (error) {
      const attempts = run.emailAttempts + 1;
      const retryAt = attempts < MAX_EMAIL_ATTEMPTS ? nextEmailAttemptAt(this.options.clock.now(), attempts) : undefined;
      this.options.onFailed?.({ ...run, emailAttempts: attempts }, error, retryAt !== undefined);
      return this.save(run, retryAt === undefined ? 'FAILED' : 'PENDING', attempts, messageOf(error), retryAt);
    }
    this.options.onSent?.(run);
    return this.save(run, 'SENT', run.emailAttempts + 1, null);
  }

  private save(
    run: ScheduledRun,
    notification: ScheduledRun['notification'],
    emailAttempts: number,
    lastError: string | null,
    retryAt?: Date,
  ): NotificationOutcome {
    const nextEmailAt = (retryAt ?? this.options.clock.now()).toISOString();
    this.options.runs.saveNotification({ scheduledScanId: run.scheduledScanId, runAt: run.runAt, notification, emailAttempts, nextEmailAt, lastError });
    return notification;
  }

  /**
   * Per target, the risks the run's Scans opened and closed; a risk deleted
   * since is left out. Read a run and a slice at a time (scan-list-runs.ts):
   * a weekly sweep of a /16 opens tens of thousands of risks.
   */
  private async summarize(run: ScheduledRun, scans: readonly ScanSummary[]): Promise<RunSummary> {
    const targets = new Map<string, TargetChanges>();
    for (const scan of scans) {
      for (const [list, kind] of [
        ['newOpen', 'newRisks'],
        ['closed', 'closedRisks'],
      ] as const) {
        for await (const ids of riskListRuns(this.options.scans, scan, list)) {
          for await (const slice of idSlices(ids)) {
            for (const risk of this.options.risks.changedRisks(run.accountId, slice)) {
              const entry = targets.get(risk.targetId) ?? { target: risk.target, label: risk.label, newRisks: [], closedRisks: [] };
              targets.set(risk.targetId, entry);
              entry[kind].push({ id: risk.id, title: risk.title, threatLevel: risk.threatLevel, scanType: risk.scanType });
            }
          }
        }
      }
    }
    const all = (kind: 'newRisks' | 'closedRisks'): RunRisk[] => [...targets.values()].flatMap((entry) => entry[kind]);
    return {
      targets: [...targets.values()],
      newCounts: countByThreat(all('newRisks')),
      closedCounts: countByThreat(all('closedRisks')),
      scans: scans.map((scan) => ({ id: scan.id, type: scan.type, state: scan.state })),
      skipped: run.skipped,
    };
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
