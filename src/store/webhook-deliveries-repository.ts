import type { DeliveryAttempt, DueDelivery, WebhookDeliveryRepository } from '../app/ports.js';
import type { EventType } from '../domain/events/event.js';
import type { Database } from './database.js';

interface DueRow {
  event_id: string;
  account_id: string;
  type: EventType;
  payload: string;
  event_created_at: string;
  endpoint_id: string;
  url: string;
  secret: string;
  endpoint_created_at: string;
  attempts: number;
}

export class SqliteWebhookDeliveryRepository implements WebhookDeliveryRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      cursor: db.prepare('SELECT event_seq FROM webhook_cursor WHERE id = 1'),
      latest: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events'),
      fanOut: db.prepare(`INSERT OR IGNORE INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at)
        SELECT e.id, w.id, 'PENDING', 0, e.created_at FROM events e
        JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.created_at <= e.created_at
        WHERE e.seq > ? AND e.seq <= ?`),
      advance: db.prepare('UPDATE webhook_cursor SET event_seq = ? WHERE id = 1'),
      due: db.prepare(`SELECT d.event_id, e.account_id, e.type, e.payload, e.created_at AS event_created_at,
          w.id AS endpoint_id, w.url, w.secret, w.created_at AS endpoint_created_at, d.attempts
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, e.seq LIMIT ?`),
      attempt: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms)
        VALUES (@eventId, @endpointId, @attemptedAt, @status, @error, @durationMs)`),
      update: db.prepare(`UPDATE webhook_deliveries SET state = @state, attempts = attempts + 1, next_attempt_at = @nextAttemptAt
        WHERE event_id = @eventId AND endpoint_id = @endpointId`),
    };
  }

  fanOut(): number {
    return this.db.transaction(() => {
      const from = (this.statements.cursor.get() as { event_seq: number }).event_seq;
      const to = (this.statements.latest.get() as { seq: number }).seq;
      if (to <= from) return 0;
      const created = this.statements.fanOut.run(from, to).changes;
      this.statements.advance.run(to);
      return created;
    }).immediate();
  }

  due(now: string, limit: number): DueDelivery[] {
    return (this.statements.due.all(now, limit) as DueRow[]).map((row) => ({
      event: { id: row.event_id, accountId: row.account_id, type: row.type, data: JSON.parse(row.payload), createdAt: new Date(row.event_created_at) },
      endpoint: { id: row.endpoint_id, accountId: row.account_id, url: row.url, secret: row.secret, createdAt: row.endpoint_created_at },
      attempts: row.attempts,
    }));
  }

  recordAttempt(attempt: DeliveryAttempt): void {
    this.db.transaction(() => {
      this.statements.attempt.run(attempt);
      this.statements.update.run(attempt);
    })();
  }
}
