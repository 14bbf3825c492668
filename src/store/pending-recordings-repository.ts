/**
 * Markers of risk recordings in progress (migration 0013): begun before the
 * first write, ended with the last; and their journal of targets (migration
 * 0020), so that rolling one back also undoes what it did to targets.
 */
import type { PendingRecording, PendingRecordings, RecordingKind } from '../app/ports.js';
import type { Target } from '../domain/targets/target.js';
import type { Database } from './database.js';

export class SqlitePendingRecordings implements PendingRecordings {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      begin: db.prepare('INSERT OR REPLACE INTO pending_recordings (scan_id, account_id, kind, started_at) VALUES (?, ?, ?, ?)'),
      end: db.prepare('DELETE FROM pending_recordings WHERE scan_id = ?'),
      endJournal: db.prepare('DELETE FROM pending_recording_targets WHERE scan_id = ?'),
      list: db.prepare('SELECT scan_id AS scanId, account_id AS accountId, kind FROM pending_recordings ORDER BY started_at'),
      // The first before-image stays; the values written are the latest.
      note: db.prepare(`INSERT INTO pending_recording_targets
          (scan_id, target_id, created, os, hostname, last_scanned_at, after_os, after_hostname, after_last_scanned_at)
        VALUES (@scanId, @targetId, @created, @os, @hostname, @lastScannedAt, @afterOs, @afterHostname, @afterLastScannedAt)
        ON CONFLICT (scan_id, target_id) DO UPDATE SET
          after_os = excluded.after_os, after_hostname = excluded.after_hostname, after_last_scanned_at = excluded.after_last_scanned_at`),
      // A field someone else wrote since (a scan that finished meanwhile) keeps their value.
      restore: db.prepare(`UPDATE targets SET
          os = iif(targets.os IS j.after_os, j.os, targets.os),
          hostname = iif(targets.hostname IS j.after_hostname, j.hostname, targets.hostname),
          last_scanned_at = iif(targets.last_scanned_at IS j.after_last_scanned_at, j.last_scanned_at, targets.last_scanned_at)
        FROM pending_recording_targets j WHERE j.scan_id = ? AND j.created = 0 AND targets.id = j.target_id`),
      created: db
        .prepare(
          `SELECT j.target_id FROM pending_recording_targets j WHERE j.scan_id = ? AND j.created = 1
          AND NOT EXISTS (SELECT 1 FROM scan_coverage c WHERE c.target_id = j.target_id)`,
        )
        .pluck(),
    };
  }

  begin(scanId: string, accountId: string, kind: RecordingKind, at: string): void {
    this.statements.begin.run(scanId, accountId, kind, at);
  }

  end(scanId: string): void {
    this.statements.end.run(scanId);
    this.statements.endJournal.run(scanId);
  }

  list(): PendingRecording[] {
    return this.statements.list.all() as PendingRecording[];
  }

  noteTarget(scanId: string, before: Target | undefined, after: Target): void {
    this.statements.note.run({
      scanId,
      targetId: after.id,
      created: before === undefined ? 1 : 0,
      os: before?.os ?? null,
      hostname: before?.hostname ?? null,
      lastScannedAt: before?.lastScannedAt ?? null,
      afterOs: after.os ?? null,
      afterHostname: after.hostname ?? null,
      afterLastScannedAt: after.lastScannedAt,
    });
  }

  restoreTargets(scanId: string): string[] {
    return this.db.transaction(() => {
      this.statements.restore.run(scanId);
      return this.statements.created.all(scanId) as string[];
    })();
  }
}
