import type { DeliveryAttempt, DueClaim, DueDelivery, WebhookDeliveryRepository } from '../app/ports.js';
import { serializedEventBody, type EventType } from '../domain/events/event.js';
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
  next_attempt_at: string;
}

export class SqliteWebhookDeliveryRepository implements WebhookDeliveryRepository {
  private readonly statements;
  private readonly transactions;

  constructor(private readonly db: Database) {
    this.statements = {
      cursor: db.prepare('SELECT event_seq FROM webhook_cursor WHERE id = 1'),
      latest: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events'),
      fanOut: db.prepare(`INSERT OR IGNORE INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at)
        SELECT e.id, w.id, 'PENDING', 0, e.created_at FROM events e
        JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.created_at <= e.created_at
          AND (e.endpoint_id IS NULL OR e.endpoint_id = w.id)
        WHERE e.seq > ? AND e.seq <= ?`),
      advance: db.prepare('UPDATE webhook_cursor SET event_seq = ? WHERE id = 1'),
      // Walks the pending-by-endpoint index from one endpoint to the next
      // (a loose index scan): one probe per endpoint, however long its queue.
      endpointsWithDue: db.prepare(`WITH RECURSIVE pending (endpoint_id) AS (
          SELECT (SELECT MIN(endpoint_id) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint WHERE state = 'PENDING')
          UNION ALL
          SELECT (SELECT MIN(d.endpoint_id) FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending_by_endpoint
            WHERE d.state = 'PENDING' AND d.endpoint_id > p.endpoint_id)
          FROM pending p WHERE p.endpoint_id IS NOT NULL)
        SELECT endpoint_id FROM pending p WHERE p.endpoint_id IS NOT NULL
          AND (SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending_by_endpoint
            WHERE d.state = 'PENDING' AND d.endpoint_id = p.endpoint_id) <= ?`).pluck(),
      dueFor: db.prepare(`SELECT d.event_id, e.account_id, e.type, e.payload, e.created_at AS event_created_at,
          w.id AS endpoint_id, w.url, w.secret, w.created_at AS endpoint_created_at, d.attempts, d.next_attempt_at
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.endpoint_id = ? AND d.state = 'PENDING' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.event_id LIMIT ?`),
      // One statement for a whole batch; keys are a JSON array of [event_id, endpoint_id] pairs.
      claim: db.prepare(`UPDATE webhook_deliveries SET next_attempt_at = ?
        WHERE state = 'PENDING' AND (event_id, endpoint_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`),
      release: db.prepare(`UPDATE webhook_deliveries SET next_attempt_at = @dueAt
        WHERE event_id = @eventId AND endpoint_id = @endpointId AND state = 'PENDING'`),
      // An endpoint deleted while its delivery was in flight takes the delivery with it: nothing to record then.
      attempt: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms)
        SELECT @eventId, @endpointId, @attemptedAt, @status, @error, @durationMs
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = @eventId AND endpoint_id = @endpointId)`),
      update: db.prepare(`UPDATE webhook_deliveries SET state = @state, attempts = attempts + 1, next_attempt_at = @nextAttemptAt
        WHERE event_id = @eventId AND endpoint_id = @endpointId`),
      // The same two writes for a whole batch of outcomes, each a JSON array of
      // [event_id, endpoint_id, attempted_at, status, error, duration_ms, state, next_attempt_at]:
      // two statement calls per flush instead of two per attempt (bench/webhooks.ts).
      attempts: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms)
        SELECT a.value ->> 0, a.value ->> 1, a.value ->> 2, a.value ->> 3, a.value ->> 4, a.value ->> 5 FROM json_each(?) a
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = a.value ->> 0 AND d.endpoint_id = a.value ->> 1)
        ORDER BY a.key`),
      updates: db.prepare(`UPDATE webhook_deliveries AS d SET state = a.value ->> 6, attempts = d.attempts + 1, next_attempt_at = a.value ->> 7
        FROM json_each(?) a WHERE d.event_id = a.value ->> 0 AND d.endpoint_id = a.value ->> 1`),
    };
    const { dueFor, claim, release, attempt, update, attempts: insertAttempts, updates } = this.statements;
    this.transactions = {
      recordAndClaim: db.transaction((attempts: readonly DeliveryAttempt[], due: DueClaim | undefined): DueDelivery[] => {
        if (attempts.length > 1 && distinctDeliveries(attempts)) {
          const rows = JSON.stringify(attempts.map((one) => [one.eventId, one.endpointId, one.attemptedAt, one.status, one.error, one.durationMs, one.state, one.nextAttemptAt]));
          insertAttempts.run(rows);
          updates.run(rows);
        } else {
          // One at a time when a delivery appears twice (an attempt that outlived its claim): each counts, in order.
          for (const one of attempts) {
            attempt.run(one);
            update.run(one);
          }
        }
        if (due === undefined) return [];
        const rows: DueRow[] = [];
        for (const [endpointId, room] of due.rooms) if (room > 0) rows.push(...(dueFor.all(endpointId, due.now, room) as DueRow[]));
        if (rows.length > 0) claim.run(due.until, JSON.stringify(rows.map((row) => [row.event_id, row.endpoint_id])));
        return rows.map(dueDelivery);
      }),
      release: db.transaction((deliveries: readonly DueDelivery[]) => {
        for (const { eventId, endpoint, dueAt } of deliveries) release.run({ eventId, endpointId: endpoint.id, dueAt });
      }),
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

  endpointsWithDue(now: string): string[] {
    return this.statements.endpointsWithDue.all(now) as string[];
  }

  recordAndClaim(attempts: readonly DeliveryAttempt[], claim?: DueClaim): DueDelivery[] {
    if (attempts.length === 0 && claim === undefined) return [];
    // IMMEDIATE: read and claim under one write lock, never a read lock upgraded.
    return this.transactions.recordAndClaim.immediate(attempts, claim);
  }

  release(deliveries: readonly DueDelivery[]): void {
    this.transactions.release(deliveries);
  }
}

function distinctDeliveries(attempts: readonly DeliveryAttempt[]): boolean {
  const keys = new Set(attempts.map((one) => `${one.eventId}\u0000${one.endpointId}`));
  return keys.size === attempts.length;
}

function dueDelivery(row: DueRow): DueDelivery {
  return {
    eventId: row.event_id,
    body: serializedEventBody({ id: row.event_id, accountId: row.account_id, type: row.type, createdAt: new Date(row.event_created_at) }, row.payload),
    endpoint: { id: row.endpoint_id, accountId: row.account_id, url: row.url, secret: row.secret, createdAt: row.endpoint_created_at },
    attempts: row.attempts,
    dueAt: row.next_attempt_at,
  };
}
