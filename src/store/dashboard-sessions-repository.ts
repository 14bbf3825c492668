import type { DashboardSession, DashboardSessionRepository } from '../app/ports.js';
import type { Database } from './database.js';

interface SessionRow {
  token_hash: Buffer;
  account_id: string;
  api_key_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export class SqliteDashboardSessionRepository implements DashboardSessionRepository {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO dashboard_sessions (token_hash, account_id, api_key_id, csrf_token, created_at, expires_at)
        VALUES (@tokenHash, @accountId, @apiKeyId, @csrfToken, @createdAt, @expiresAt)`),
      findLive: db.prepare(`SELECT s.* FROM dashboard_sessions s JOIN api_keys k ON k.id = s.api_key_id AND k.revoked_at IS NULL
        WHERE s.token_hash = ? AND s.expires_at > ?`),
      delete: db.prepare('DELETE FROM dashboard_sessions WHERE token_hash = ?'),
      deleteEnded: db.prepare(`DELETE FROM dashboard_sessions
        WHERE expires_at <= ? OR api_key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)`),
    };
  }

  insert(session: DashboardSession): void {
    this.statements.insert.run(session);
  }

  findLive(tokenHash: Buffer, now: string): DashboardSession | undefined {
    const row = this.statements.findLive.get(tokenHash, now) as SessionRow | undefined;
    if (row === undefined) return undefined;
    return {
      tokenHash: row.token_hash,
      accountId: row.account_id,
      apiKeyId: row.api_key_id,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  delete(tokenHash: Buffer): void {
    this.statements.delete.run(tokenHash);
  }

  deleteEnded(now: string): number {
    return this.statements.deleteEnded.run(now).changes;
  }
}
