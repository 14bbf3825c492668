import type { UploadTokenRepository } from '../app/ports.js';
import type { Database } from './database.js';

export class SqliteUploadTokenRepository implements UploadTokenRepository {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      save: db.prepare(`INSERT INTO scan_upload_tokens (scan_id, hash, created_at) VALUES (?, ?, ?)
        ON CONFLICT (scan_id) DO UPDATE SET hash = excluded.hash, created_at = excluded.created_at`),
      find: db.prepare('SELECT hash FROM scan_upload_tokens WHERE scan_id = ?'),
      revoke: db.prepare('DELETE FROM scan_upload_tokens WHERE scan_id = ?'),
    };
  }

  save(scanId: string, hash: Buffer, createdAt: string): void {
    this.statements.save.run(scanId, hash, createdAt);
  }

  find(scanId: string): Buffer | undefined {
    return (this.statements.find.get(scanId) as { hash: Buffer } | undefined)?.hash;
  }

  revoke(scanId: string): void {
    this.statements.revoke.run(scanId);
  }
}
