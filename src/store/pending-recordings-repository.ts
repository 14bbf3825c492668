/** Markers of risk recordings in progress (migration 0013): begun before the first write, ended with the last. */
import type { PendingRecording, PendingRecordings, RecordingKind } from '../app/ports.js';
import type { Database } from './database.js';

export class SqlitePendingRecordings implements PendingRecordings {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      begin: db.prepare('INSERT OR REPLACE INTO pending_recordings (scan_id, account_id, kind, started_at) VALUES (?, ?, ?, ?)'),
      end: db.prepare('DELETE FROM pending_recordings WHERE scan_id = ?'),
      list: db.prepare('SELECT scan_id AS scanId, account_id AS accountId, kind FROM pending_recordings ORDER BY started_at'),
    };
  }

  begin(scanId: string, accountId: string, kind: RecordingKind, at: string): void {
    this.statements.begin.run(scanId, accountId, kind, at);
  }

  end(scanId: string): void {
    this.statements.end.run(scanId);
  }

  list(): PendingRecording[] {
    return this.statements.list.all() as PendingRecording[];
  }
}
