import type { ScheduledScan, ScheduledScanRepository } from '../app/ports.js';
import type { Page } from '../app/ports.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { Database } from './database.js';
import { PRUNE_DELETIONS, RECORD_DELETION } from './scan-resource-marks.js';
import { newestFirstPage } from './keyset.js';

interface ScheduledScanRow {
  seq: number;
  id: string;
  account_id: string;
  object_name: string;
  name: string | null;
  schedule: ScheduledScan['schedule'];
  scan_types: string;
  filter_target_ids: string;
  filter_tags: string;
  email_notification: ScheduledScan['emailNotification'];
  email_to: string;
  start_time: string;
  schedule_dates: string | null;
  time_zone: string | null;
  disabled: number;
  next_run: string | null;
  last_ran: string | null;
  created_at: string;
}

function toScheduledScan(row: ScheduledScanRow): ScheduledScan {
  return {
    id: row.id,
    accountId: row.account_id,
    objectName: row.object_name,
    name: row.name,
    schedule: row.schedule,
    scanTypes: JSON.parse(row.scan_types),
    filterTargetIds: JSON.parse(row.filter_target_ids),
    filterTags: JSON.parse(row.filter_tags),
    emailNotification: row.email_notification,
    emailTo: JSON.parse(row.email_to),
    startTime: row.start_time,
    scheduleDates: row.schedule_dates === null ? null : JSON.parse(row.schedule_dates),
    timeZone: row.time_zone,
    disabled: row.disabled === 1,
    nextRun: row.next_run,
    lastRan: row.last_ran,
    createdAt: row.created_at,
  };
}

function toParams(scheduledScan: ScheduledScan) {
  return {
    id: scheduledScan.id,
    accountId: scheduledScan.accountId,
    objectName: scheduledScan.objectName,
    name: scheduledScan.name,
    schedule: scheduledScan.schedule,
    scanTypes: JSON.stringify(scheduledScan.scanTypes),
    filterTargetIds: JSON.stringify(scheduledScan.filterTargetIds),
    filterTags: JSON.stringify(scheduledScan.filterTags),
    emailNotification: scheduledScan.emailNotification,
    emailTo: JSON.stringify(scheduledScan.emailTo),
    startTime: scheduledScan.startTime,
    scheduleDates: scheduledScan.scheduleDates === null ? null : JSON.stringify(scheduledScan.scheduleDates),
    timeZone: scheduledScan.timeZone,
    disabled: scheduledScan.disabled ? 1 : 0,
    nextRun: scheduledScan.nextRun,
    lastRan: scheduledScan.lastRan,
    createdAt: scheduledScan.createdAt,
  };
}

export class SqliteScheduledScanRepository implements ScheduledScanRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert:
        db.prepare(`INSERT INTO scheduled_scans (id, account_id, object_name, name, schedule, scan_types, filter_target_ids, filter_tags, email_notification,
          email_to, start_time, schedule_dates, time_zone, disabled, next_run, last_ran, created_at)
        VALUES (@id, @accountId, @objectName, @name, @schedule, @scanTypes, @filterTargetIds, @filterTags, @emailNotification,
          @emailTo, @startTime, @scheduleDates, @timeZone, @disabled, @nextRun, @lastRan, @createdAt)`),
      update: db.prepare(`UPDATE scheduled_scans SET name = @name, schedule = @schedule, scan_types = @scanTypes, filter_target_ids = @filterTargetIds,
          filter_tags = @filterTags, email_notification = @emailNotification, email_to = @emailTo, start_time = @startTime,
          schedule_dates = @scheduleDates, time_zone = @timeZone, disabled = @disabled, next_run = @nextRun, last_ran = @lastRan
        WHERE account_id = @accountId AND id = @id`),
      byId: db.prepare('SELECT * FROM scheduled_scans WHERE account_id = ? AND id = ?'),
      delete: db.prepare('DELETE FROM scheduled_scans WHERE account_id = ? AND id = ?'),
      recordDeletion: db.prepare(RECORD_DELETION),
      pruneDeletions: db.prepare(PRUNE_DELETIONS),
      byIdUnscoped: db.prepare('SELECT * FROM scheduled_scans WHERE id = ?'),
      byObjectName: db.prepare('SELECT * FROM scheduled_scans WHERE account_id = ? AND object_name = ?'),
      withNextRun: db.prepare('SELECT id FROM scheduled_scans WHERE next_run IS NOT NULL ORDER BY next_run').pluck(),
      recordRun: db.prepare('UPDATE scheduled_scans SET last_ran = @lastRan, next_run = @nextRun WHERE id = @id AND next_run = @expectedNextRun'),
    };
  }

  insert(scheduledScan: ScheduledScan): void {
    this.statements.insert.run(toParams(scheduledScan));
  }

  update(scheduledScan: ScheduledScan): void {
    this.statements.update.run(toParams(scheduledScan));
  }

  findById(accountId: string, id: string): ScheduledScan | undefined {
    const row = this.statements.byId.get(accountId, id) as ScheduledScanRow | undefined;
    return row && toScheduledScan(row);
  }

  delete(accountId: string, id: string): boolean {
    return this.db.transaction(() => {
      if (this.statements.delete.run(accountId, id).changes === 0) return false;
      // Its ScheduledScan resource goes after it (scan-resource-marks.ts).
      this.statements.recordDeletion.run(id, new Date().toISOString());
      this.statements.pruneDeletions.run();
      return true;
    })();
  }

  findByIdUnscoped(id: string): ScheduledScan | undefined {
    const row = this.statements.byIdUnscoped.get(id) as ScheduledScanRow | undefined;
    return row && toScheduledScan(row);
  }

  findByObjectName(accountId: string, objectName: string): ScheduledScan | undefined {
    const row = this.statements.byObjectName.get(accountId, objectName) as ScheduledScanRow | undefined;
    return row && toScheduledScan(row);
  }

  idsWithNextRun(): string[] {
    return this.statements.withNextRun.all() as string[];
  }

  recordRun(id: string, expectedNextRun: string, lastRan: string, nextRun: string | null): boolean {
    return this.statements.recordRun.run({ id, expectedNextRun, lastRan, nextRun }).changes > 0;
  }

  list(accountId: string, pageSize: number, after: readonly CursorValue[] | undefined): Page<ScheduledScan> {
    const page = newestFirstPage<ScheduledScanRow>(this.db, 'scheduled_scans', accountId, [], pageSize, after);
    return { items: page.rows.map(toScheduledScan), nextCursor: page.nextCursor };
  }
}
