/**
 * E-mail notifications of scheduled runs (SPEC.md email_notification). A run
 * owes its e-mail once every Scan it created is terminal; the notifier looks
 * at owing runs, decides (NEVER, ALWAYS, ON_CHANGES), sends through the
 * Mailer and records the outcome. A failed send is retried on a schedule and
 * logged; the run and its Scans are never affected by mail trouble.
 */
import type { Clock } from '../domain/clock.js';
import { isTerminal, type Scan } from '../domain/scans/scan.js';
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

export interface RunNotifierOptions {
  runs: ScheduledRunRepository;
  scans: ScanRepository;
  risks: RiskRepository;
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
    const scans = run.scanIds.map((id) => this.options.scans.findByIdUnscoped(id)).filter((scan): scan is Scan => scan !== undefined);
    if (scans.some((scan) => !isTerminal(scan.state))) return 'WAITING';
    const summary = this.summarize(run, scans);
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

  /** Per target, the risks the run's Scans opened and closed; a risk deleted since is left out. */
  private summarize(run: ScheduledRun, scans: Scan[]): RunSummary {
    const targets = new Map<string, TargetChanges>();
    const collect = (ids: readonly string[], kind: 'newRisks' | 'closedRisks') => {
      for (const id of ids) {
        const risk = this.options.risks.findView(run.accountId, id);
        if (risk === undefined) continue;
        const entry = targets.get(risk.targetId) ?? { target: risk.target, label: risk.targetLabel, newRisks: [], closedRisks: [] };
        targets.set(risk.targetId, entry);
        entry[kind].push({ id: risk.id, title: risk.definition.title, threatLevel: risk.definition.threat_level, scanType: risk.scanType });
      }
    };
    for (const scan of scans) {
      collect(scan.risks.newOpen, 'newRisks');
      collect(scan.risks.closed, 'closedRisks');
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
