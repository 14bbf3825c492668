/** Markers of uploads being recorded (migration 0013): begun before the first write, ended with the last. */
import type { PendingImports } from '../app/ports.js';
import type { Database } from './database.js';

export class SqlitePendingImports implements PendingImports {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      begin: db.prepare('INSERT INTO pending_imports (scan_id, account_id, started_at) VALUES (?, ?, ?)'),
      end: db.prepare('DELETE FROM pending_imports WHERE scan_id = ?'),
      list: db.prepare('SELECT scan_id AS scanId, account_id AS accountId FROM pending_imports ORDER BY started_at'),
    };
  }

  begin(scanId: string, accountId: string, at: string): void {
    this.statements.begin.run(scanId, accountId, at);
  }

  end(scanId: string): void {
    this.statements.end.run(scanId);
  }

  list(): Array<{ scanId: string; accountId: string }> {
    return this.statements.list.all() as Array<{ scanId: string; accountId: string }>;
  }
}
