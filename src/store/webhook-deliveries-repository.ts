import type { DeliveryAttempt, DueClaim, DueDelivery, WebhookDeliveryRepository, WebhookEndpoint } from '../app/ports.js';
import { serializedEventBody, type EventType } from '../domain/events/event.js';
import type { Database } from './database.js';

interface EventRow {
  id: string;
  account_id: string;
  type: EventType;
  payload: string;
  created_at: string;
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  created_at: string;
}

/**
 * How many serialized event bodies are kept: an event goes to each of its
 * account's endpoints, claimed at about the same time, so its payload is read
 * and serialized once rather than once per endpoint. About 750 bytes each for
 * a scan.updated event, so a few MB at most.
 */
export const BODY_CACHE_EVENTS = 4096;

export class SqliteWebhookDeliveryRepository implements WebhookDeliveryRepository {
  private readonly statements;
  private readonly transactions;
  /** Serialized bodies by event id, oldest first; events never change once recorded. */
  private readonly bodies = new Map<string, string>();

  constructor(private readonly db: Database) {
    const synchronous = db.pragma('synchronous', { simple: true }) as number;
    this.statements = {
      relaxed: db.prepare('PRAGMA synchronous = NORMAL'),
      restore: db.prepare(`PRAGMA synchronous = ${Math.trunc(synchronous)}`),
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
      // Keys only, along the pending-by-endpoint index, oldest first, from a
      // position on (a range of the index: what lies before it was taken
      // already) and past the ones in hand (a JSON array of event ids).
      // Payloads are read per event below.
      dueFor: db.prepare(`SELECT event_id, attempts, next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint
        WHERE endpoint_id = @endpointId AND state = 'PENDING' AND next_attempt_at <= @now AND (next_attempt_at, event_id) > (@afterDueAt, @afterEventId)
          AND event_id NOT IN (SELECT value FROM json_each(@inHand))
        ORDER BY next_attempt_at, event_id LIMIT @room`),
      endpoint: db.prepare('SELECT id, account_id, url, secret, created_at FROM webhook_endpoints WHERE id = ?'),
      events: db.prepare('SELECT id, account_id, type, payload, created_at FROM events WHERE id IN (SELECT value FROM json_each(?))'),
      // One outcome: the delivery's next state, then, only when the delivery
      // is still there (an endpoint deleted while its delivery was in flight
      // takes the delivery with it: nothing to record then), its attempt.
      // Positional parameters and a row at a time: cheaper than one
      // statement over a JSON array of the batch (json_each and ->> parse
      // each row's JSON again for every column) and than named parameters
      // (bench/webhooks.ts header).
      update: db.prepare(`UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?
        WHERE event_id = ? AND endpoint_id = ?`),
      attempt: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)`),
    };
    const { attempt, update } = this.statements;
    this.transactions = {
      record: db.transaction((attempts: readonly DeliveryAttempt[], fanOut: boolean): number => {
        // In order: when a delivery appears twice, each attempt counts.
        for (const one of attempts) {
          if (update.run(one.state, one.nextAttemptAt, one.eventId, one.endpointId).changes === 0) continue;
          attempt.run(one.eventId, one.endpointId, one.attemptedAt, one.status, one.error, one.durationMs);
        }
        return fanOut ? this.fanOutNew() : 0;
      }),
    };
  }

  /**
   * Commits without waiting for the disk (synchronous = NORMAL for this one
   * transaction; the connection's own setting, FULL, is put back at once).
   * What it writes is the dispatcher's bookkeeping, derived from events that
   * were committed in full: in WAL mode a process crash loses none of it, and
   * a power loss or OS crash can only roll back its last writes, whole, before
   * the next synced commit. Then those deliveries are PENDING again and sent
   * again, and the fan-out is redone from the cursor, which moves in the same
   * transaction: at-least-once holds, no event is lost, no attempt skipped.
   */
  record(attempts: readonly DeliveryAttempt[], fanOut: boolean): number {
    if (attempts.length === 0 && !fanOut) return 0;
    this.statements.relaxed.run();
    try {
      // IMMEDIATE: the cursor is read and moved under one write lock, never a read lock upgraded.
      return this.transactions.record.immediate(attempts, fanOut);
    } finally {
      this.statements.restore.run();
    }
  }

  endpointsWithDue(now: string): string[] {
    return this.statements.endpointsWithDue.all(now) as string[];
  }

  due(claim: DueClaim): DueDelivery[] {
    const picked: Array<{ endpoint: WebhookEndpoint; eventId: string; attempts: number; dueAt: string }> = [];
    for (const [endpointId, { room, after, inHand }] of claim.lanes) {
      if (room <= 0) continue;
      const rows = this.statements.dueFor.all({
        endpointId,
        now: claim.now,
        afterDueAt: after?.dueAt ?? '',
        afterEventId: after?.eventId ?? '',
        inHand: JSON.stringify(inHand),
        room,
      }) as Array<{ event_id: string; attempts: number; next_attempt_at: string }>;
      if (rows.length === 0) continue;
      const endpointRow = this.statements.endpoint.get(endpointId) as EndpointRow | undefined;
      if (endpointRow === undefined) continue;
      const endpoint = { id: endpointRow.id, accountId: endpointRow.account_id, url: endpointRow.url, secret: endpointRow.secret, createdAt: endpointRow.created_at };
      for (const row of rows) picked.push({ endpoint, eventId: row.event_id, attempts: row.attempts, dueAt: row.next_attempt_at });
    }
    this.readBodies(picked.map((one) => one.eventId));
    const due: DueDelivery[] = [];
    for (const { endpoint, eventId, attempts, dueAt } of picked) {
      const body = this.bodies.get(eventId);
      // A delivery outlives its event only if the event was deleted with its account, endpoints included.
      if (body !== undefined) due.push({ eventId, body, endpoint, attempts, dueAt });
    }
    return due;
  }

  /** Creates the deliveries of the events recorded since the cursor and moves it past them; inside a write transaction. */
  private fanOutNew(): number {
    const from = (this.statements.cursor.get() as { event_seq: number }).event_seq;
    const to = (this.statements.latest.get() as { seq: number }).seq;
    if (to <= from) return 0;
    const created = this.statements.fanOut.run(from, to).changes;
    this.statements.advance.run(to);
    return created;
  }

  /**
   * Serializes the bodies of the events not in the cache, each once, reading
   * them in one statement. The ones asked for become the newest, so the
   * eviction of the oldest never takes one of them (a claim asks for far
   * fewer than BODY_CACHE_EVENTS).
   */
  private readBodies(eventIds: readonly string[]): void {
    const missing: string[] = [];
    for (const id of new Set(eventIds)) {
      const body = this.bodies.get(id);
      if (body === undefined) {
        missing.push(id);
      } else {
        this.bodies.delete(id);
        this.bodies.set(id, body);
      }
    }
    if (missing.length > 0) {
      for (const row of this.statements.events.all(JSON.stringify(missing)) as EventRow[]) {
        this.bodies.set(row.id, serializedEventBody({ id: row.id, accountId: row.account_id, type: row.type, createdAt: new Date(row.created_at) }, row.payload));
      }
    }
    for (const oldest of this.bodies.keys()) {
      if (this.bodies.size <= BODY_CACHE_EVENTS) break;
      this.bodies.delete(oldest);
    }
  }
}
