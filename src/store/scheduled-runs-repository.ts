import type { ScheduledRun, ScheduledRunRepository } from '../app/ports.js';
import type { Database } from './database.js';

interface ScheduledRunRow {
  scheduled_scan_id: string;
  run_at: string;
  account_id: string;
  schedule_name: string;
  started_at: string;
  scan_ids: string;
  skipped: string;
  email_notification: ScheduledRun['emailNotification'];
  email_to: string;
  notification: ScheduledRun['notification'];
  email_attempts: number;
  next_email_at: string;
  last_error: string | null;
}

function toRun(row: ScheduledRunRow): ScheduledRun {
  return {
    scheduledScanId: row.scheduled_scan_id,
    runAt: row.run_at,
    accountId: row.account_id,
    scheduleName: row.schedule_name,
    startedAt: row.started_at,
    scanIds: JSON.parse(row.scan_ids),
    skipped: JSON.parse(row.skipped),
    emailNotification: row.email_notification,
    emailTo: JSON.parse(row.email_to),
    notification: row.notification,
    emailAttempts: row.email_attempts,
    nextEmailAt: row.next_email_at,
    lastError: row.last_error,
  };
}

export class SqliteScheduledRunRepository implements ScheduledRunRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT OR IGNORE INTO scheduled_runs (scheduled_scan_id, run_at, account_id, schedule_name, started_at, scan_ids, skipped,
          email_notification, email_to, notification, email_attempts, next_email_at, last_error)
        VALUES (@scheduledScanId, @runAt, @accountId, @scheduleName, @startedAt, @scanIds, @skipped,
          @emailNotification, @emailTo, @notification, @emailAttempts, @nextEmailAt, @lastError)`),
      pending: db.prepare(`SELECT * FROM scheduled_runs WHERE notification = 'PENDING' AND next_email_at <= ? ORDER BY next_email_at LIMIT ?`),
      saveNotification: db.prepare(`UPDATE scheduled_runs SET notification = @notification, email_attempts = @emailAttempts,
          next_email_at = @nextEmailAt, last_error = @lastError WHERE scheduled_scan_id = @scheduledScanId AND run_at = @runAt`),
      runsOf: db.prepare('SELECT * FROM scheduled_runs WHERE scheduled_scan_id = ? ORDER BY run_at'),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  insert(run: ScheduledRun): boolean {
    const params = { ...run, scanIds: JSON.stringify(run.scanIds), skipped: JSON.stringify(run.skipped), emailTo: JSON.stringify(run.emailTo) };
    return this.statements.insert.run(params).changes > 0;
  }

  pendingNotifications(now: string, limit: number): ScheduledRun[] {
    return (this.statements.pending.all(now, limit) as ScheduledRunRow[]).map(toRun);
  }

  saveNotification(run: Pick<ScheduledRun, 'scheduledScanId' | 'runAt' | 'notification' | 'emailAttempts' | 'nextEmailAt' | 'lastError'>): void {
    this.statements.saveNotification.run(run);
  }

  runsOf(scheduledScanId: string): ScheduledRun[] {
    return (this.statements.runsOf.all(scheduledScanId) as ScheduledRunRow[]).map(toRun);
  }
}
