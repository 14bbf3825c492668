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
      // Three index counts, none reading a row: pending and failed deliveries
      // each have their own partial index, delivered ones are the rest.
      counts: db.prepare(`SELECT
          (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_of_endpoint WHERE endpoint_id = @id) AS total,
          (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint WHERE endpoint_id = @id AND state = 'PENDING') AS pending,
          (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_failed_by_endpoint WHERE endpoint_id = @id AND state = 'FAILED') AS failed`),
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
    const { total, pending, failed } = this.statements.counts.get({ id: endpointId }) as { total: number; pending: number; failed: number };
    return { pending, delivered: total - pending - failed, failed };
  }
}
