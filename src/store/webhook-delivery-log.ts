import type { DeliveryCounts, LoggedAttempt, WebhookDeliveryLog } from '../app/ports.js';
import type { Database } from './database.js';

interface AttemptRow {
  event_id: string;
  event_type: string | null;
  attempted_at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** Reads what the dispatcher recorded, per endpoint; callers check that the endpoint belongs to the account. */
export class SqliteWebhookDeliveryLog implements WebhookDeliveryLog {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      attempts: db.prepare(`SELECT a.event_id, e.type AS event_type, a.attempted_at, a.status, a.error, a.duration_ms
        FROM webhook_attempts a LEFT JOIN events e ON e.id = a.event_id
        WHERE a.endpoint_id = ? ORDER BY a.seq DESC LIMIT ?`),
      counts: db.prepare('SELECT state, COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? GROUP BY state'),
    };
  }

  attemptsFor(endpointId: string, limit: number): LoggedAttempt[] {
    return (this.statements.attempts.all(endpointId, limit) as AttemptRow[]).map((row) => ({
      eventId: row.event_id,
      eventType: row.event_type ?? 'unknown',
      attemptedAt: row.attempted_at,
      status: row.status,
      error: row.error,
      durationMs: row.duration_ms,
    }));
  }

  countsFor(endpointId: string): DeliveryCounts {
    const counts: DeliveryCounts = { pending: 0, delivered: 0, failed: 0 };
    for (const row of this.statements.counts.all(endpointId) as Array<{ state: 'PENDING' | 'DELIVERED' | 'FAILED'; n: number }>) {
      counts[row.state.toLowerCase() as keyof DeliveryCounts] = row.n;
    }
    return counts;
  }
}
