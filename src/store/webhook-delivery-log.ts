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
      // Four index counts, none reading a row: pending and failed deliveries
      // each have their own partial index, delivered ones are the rest plus
      // those done at their first attempt, which have no row, only their
      // first_delivered attempt (its own partial index, migration 0019). Pending
      // also counts the deliveries of events past the dispatcher's cursor that
      // have no row yet (their first attempt writes it: src/store/webhook-deliveries-repository.ts),
      // a range of events_by_account of at most a few seconds of events.
      counts: db.prepare(`SELECT
          (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_of_endpoint WHERE endpoint_id = @id) AS total,
          (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint WHERE endpoint_id = @id AND state = 'PENDING') AS pending,
          (SELECT COUNT(*) FROM webhook_endpoints w JOIN events e INDEXED BY events_by_account ON e.account_id = w.account_id
            WHERE w.id = @id AND e.seq > (SELECT event_seq FROM webhook_cursor WHERE id = 1) AND e.created_at >= w.created_at
              AND (e.endpoint_id IS NULL OR e.endpoint_id = w.id)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = w.id)
              AND NOT EXISTS (SELECT 1 FROM webhook_attempts a INDEXED BY webhook_attempts_first_delivered
                WHERE a.endpoint_id = w.id AND a.event_id = e.id AND a.first_delivered = 1)) AS fresh,
          (SELECT COUNT(*) FROM webhook_attempts INDEXED BY webhook_attempts_first_delivered WHERE endpoint_id = @id AND first_delivered = 1) AS first,
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
    const { total, pending, fresh, first, failed } = this.statements.counts.get({ id: endpointId }) as {
      total: number;
      pending: number;
      fresh: number;
      first: number;
      failed: number;
    };
    return { pending: pending + fresh, delivered: total - pending - failed + first, failed };
  }
}
