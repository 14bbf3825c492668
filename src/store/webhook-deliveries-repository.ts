import type { DeliveryAttempt, DueClaim, DueDelivery, WebhookDeliveryRepository } from '../app/ports.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { serializedEventBody, type EventType } from '../domain/events/event.js';
import type { Database } from './database.js';
import { EventPayloads, type StoredPayload } from './event-rows.js';

interface EventRow extends StoredPayload {
  id: string;
  account_id: string;
  type: EventType;
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
const BODY_CACHE_EVENTS = 4096;

/**
 * How long a new event's deliveries are taken straight from the outbox before
 * they are written as PENDING rows. Within it, a delivery gets its row only
 * with the outcome of its first attempt: one row written per delivery instead
 * of a PENDING row, its move out of the pending index and an update (the
 * dispatcher's largest cost, bench/webhooks.ts). Past it, the deliveries not
 * yet attempted (a slow or dead endpoint's, those a stop left behind) are
 * written as PENDING rows and wait in the pending index, as retries do, so
 * that the outbox's unread part stays a few seconds of events.
 */
export const FIRST_ATTEMPT_WINDOW_MS = 10_000;

const NONE: never[] = [];

interface FreshRow {
  seq: number;
  id: string;
  created_at: string;
}

/** An event recorded since the store was made, as a fresh read needs it: held in memory (RECENT_EVENTS). */
interface RecentEvent extends FreshRow {
  endpoint_id: string | null;
}

interface NewEventRow extends RecentEvent {
  account_id: string;
}

/**
 * How many events recorded since the store was made are held in memory (their
 * keys: seq, id, time, test endpoint) until every endpoint of their account
 * has taken its deliveries of them: each endpoint's new deliveries are then
 * found without reading the outbox again, one read per event instead of one
 * per endpoint. More new events at once than this (a large upload's) and the
 * outbox is read per endpoint as before. About 150 bytes each, so 3 MB at most.
 */
export const RECENT_EVENTS = 20_000;

interface PendingRow {
  event_id: string;
  attempts: number;
  next_attempt_at: string;
}

export interface DeliveryRepositoryOptions {
  /** Times FIRST_ATTEMPT_WINDOW_MS. */
  clock?: Clock;
  firstAttemptWindowMs?: number;
  /** RECENT_EVENTS (tests make it small). */
  recentEvents?: number;
}

/**
 * The dispatcher's store. A delivery is due from the moment its event is in
 * the outbox; its row in webhook_deliveries is written with the outcome of
 * its first attempt (an upsert) unless that attempt delivered it: then its
 * attempt, marked first_delivered, is its only record (migration 0019). Or,
 * for one not attempted within
 * FIRST_ATTEMPT_WINDOW_MS, as a PENDING row when the cursor moves past its
 * event. So the deliveries due are the PENDING rows plus the "fresh" ones:
 * for each event past the cursor (webhook_cursor), each endpoint its account
 * had when it was recorded that has no row and no first_delivered attempt
 * for it yet. Every event up to the
 * cursor has, per delivery, a row or a first_delivered attempt. A crash loses nothing: what has no row is
 * past the cursor, and read again from the outbox after the restart.
 */
export class SqliteWebhookDeliveryRepository implements WebhookDeliveryRepository {
  private readonly statements;
  private readonly transactions;
  private readonly clock: Clock;
  private readonly firstAttemptWindowMs: number;
  private readonly recentEvents: number;
  /** Serialized bodies by event id, oldest first; events never change once recorded. */
  private readonly bodies = new Map<string, string>();
  private readonly payloads: EventPayloads;
  /** The newest event seen at the last fan-out pass: fresh deliveries are read up to it. */
  private latest = 0;
  /** Each newest event seen and when (ms), oldest first: the cursor moves past those seen longer than the window ago. */
  private readonly seen: Array<{ seq: number; atMs: number }> = [];
  /** Accounts with events past the cursor, and their newest one. */
  private readonly accountsLatest = new Map<string, number>();
  /** The endpoints of those accounts, read again whenever the account has new events (an endpoint added since gets only later ones). */
  private readonly accountEndpoints = new Map<string, string[]>();
  /**
   * Per endpoint, how far the outbox was read for its fresh deliveries: what
   * lies before was taken (and is held by the dispatcher, or has its row), or
   * is not for it. Never read twice; past the cursor only.
   */
  private readonly freshFrom = new Map<string, number>();
  /**
   * How many committed passes of the cursor wrote PENDING rows for fresh
   * deliveries. A fresh delivery is handed out with the count of its time
   * (DueDelivery.rowless); while the count is unchanged, no row can have
   * been written for it (this store is the only writer: one dispatcher per
   * database), so an outcome that delivered it is written as its attempt
   * alone, with no per-row check in SQL.
   */
  private rowPasses = 0;
  /**
   * Events recorded since the store was made, by account, in seq order: every
   * event of the account past `recentFrom` and past `trimmed` (where all its
   * endpoints had read to), up to `latest`, is here. No delivery of theirs can
   * have a row or a first-attempt record but those this store wrote, for
   * deliveries it handed out (before their endpoint's freshFrom), so a fresh
   * read over them needs no check in SQL.
   */
  private readonly recent = new Map<string, { events: RecentEvent[]; trimmed: number }>();
  private recentCount = 0;
  private recentFrom: number;
  /**
   * The endpoints with PENDING rows due at `pendingDueAt`, from the last endpointsWithDue: due() at the same time reads no others' rows. Forgotten at
   * every write.
   */
  private pendingDue: Set<string> | undefined;
  private pendingDueAt = '';

  constructor(
    private readonly db: Database,
    options: DeliveryRepositoryOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.payloads = new EventPayloads(db);
    this.firstAttemptWindowMs = options.firstAttemptWindowMs ?? FIRST_ATTEMPT_WINDOW_MS;
    this.recentEvents = options.recentEvents ?? RECENT_EVENTS;
    const synchronous = db.pragma('synchronous', { simple: true }) as number;
    this.statements = {
      relaxed: db.prepare('PRAGMA synchronous = NORMAL'),
      restore: db.prepare(`PRAGMA synchronous = ${Math.trunc(synchronous)}`),
      cursor: db.prepare('SELECT event_seq FROM webhook_cursor WHERE id = 1'),
      // The last event delivery may read: short of the first event a chunked recording still pending holds (its marker's
      // first_event_seq; RecordingStaging.holdRiskEvents), whatever came after it, so none of its goes out before it ends.
      latest: db.prepare(`SELECT COALESCE((SELECT MIN(first_event_seq) - 1 FROM pending_recordings), (SELECT MAX(seq) FROM events), 0) AS seq`),
      newSince: db.prepare('SELECT account_id, MAX(seq) AS seq FROM events WHERE seq > ? AND seq <= ? GROUP BY account_id'),
      newEvents: db.prepare('SELECT seq, id, account_id, created_at, endpoint_id FROM events WHERE seq > ? AND seq <= ? ORDER BY seq'),
      endpointsOf: db.prepare('SELECT id FROM webhook_endpoints WHERE account_id = ?').pluck(),
      // An endpoint's fresh deliveries, in the order the events were recorded:
      // its account's events past `from` (a range of events_by_account), those
      // of its time, without a row yet.
      freshFor: db.prepare(`SELECT e.seq, e.id, e.created_at FROM events e INDEXED BY events_by_account
        WHERE e.account_id = @accountId AND e.seq > @from AND e.seq <= @to AND e.created_at >= @since
          AND (e.endpoint_id IS NULL OR e.endpoint_id = @endpointId)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = @endpointId)
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a INDEXED BY webhook_attempts_first_delivered
            WHERE a.endpoint_id = @endpointId AND a.event_id = e.id AND a.first_delivered = 1)
        ORDER BY e.seq LIMIT @room`),
      fanOut: db.prepare(`INSERT OR IGNORE INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at)
        SELECT e.id, w.id, 'PENDING', 0, e.created_at FROM events e
        JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.created_at <= e.created_at
          AND (e.endpoint_id IS NULL OR e.endpoint_id = w.id)
        WHERE e.seq > ? AND e.seq <= ?
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a INDEXED BY webhook_attempts_first_delivered
            WHERE a.endpoint_id = w.id AND a.event_id = e.id AND a.first_delivered = 1)`),
      advance: db.prepare('UPDATE webhook_cursor SET event_seq = ? WHERE id = 1'),
      // Walks the pending-by-endpoint index from one endpoint to the next
      // (a loose index scan): one probe per endpoint, however long its queue.
      endpointsWithDue: db
        .prepare(
          `WITH RECURSIVE pending (endpoint_id) AS (
          SELECT (SELECT MIN(endpoint_id) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint WHERE state = 'PENDING')
          UNION ALL
          SELECT (SELECT MIN(d.endpoint_id) FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending_by_endpoint
            WHERE d.state = 'PENDING' AND d.endpoint_id > p.endpoint_id)
          FROM pending p WHERE p.endpoint_id IS NOT NULL)
        SELECT endpoint_id FROM pending p WHERE p.endpoint_id IS NOT NULL
          AND (SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending_by_endpoint
            WHERE d.state = 'PENDING' AND d.endpoint_id = p.endpoint_id) <= ?`,
        )
        .pluck(),
      // Keys only, along the pending-by-endpoint index, oldest first, from a
      // position on (a range of the index: what lies before it was taken
      // already) and past the ones in hand (a JSON array of event ids).
      // Payloads are read per event below.
      dueFor: db.prepare(`SELECT event_id, attempts, next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_pending_by_endpoint
        WHERE endpoint_id = @endpointId AND state = 'PENDING' AND next_attempt_at <= @now AND (next_attempt_at, event_id) > (@afterDueAt, @afterEventId)
          AND event_id NOT IN (SELECT value FROM json_each(@inHand))
        ORDER BY next_attempt_at, event_id LIMIT @room`),
      endpoint: db.prepare('SELECT id, account_id, url, secret, created_at FROM webhook_endpoints WHERE id = ?'),
      events: db.prepare('SELECT seq, id, account_id, type, payload, parts, created_at FROM events WHERE id IN (SELECT value FROM json_each(?))'),
      // One outcome: the delivery's row, written with its first outcome or
      // updated, then its attempt; both only while its endpoint exists (one
      // deleted while its delivery was in flight takes its deliveries with
      // it: nothing to record then), and never for a delivery already done
      // at its first attempt (below: it has no row). Positional parameters and a row at a
      // time: cheaper than one statement over a JSON array of the batch
      // (json_each and ->> parse each row's JSON again for every column) and
      // than named parameters (bench/webhooks.ts header).
      upsert: db.prepare(`INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at)
        SELECT ?, ?, ?, 1, ? WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?)
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts INDEXED BY webhook_attempts_first_delivered WHERE endpoint_id = ? AND event_id = ? AND first_delivered = 1)
        ON CONFLICT (event_id, endpoint_id) DO UPDATE SET state = excluded.state, attempts = attempts + 1, next_attempt_at = excluded.next_attempt_at`),
      attempt: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)`),
      // The same as firstDelivered when the store knows the checks hold: a
      // plain INSERT ... VALUES costs about half the guarded INSERT ... SELECT
      // (bench/webhooks.ts header, third pass).
      firstDeliveredKnown: db.prepare(
        `INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms, first_delivered) VALUES (?, ?, ?, ?, ?, ?, 1)`,
      ),
      // A delivery done at its first attempt: its attempt alone, marked, no
      // delivery row (half the rows of a delivery that goes well). Only while
      // it has no row (not attempted before, no PENDING row written by the
      // cursor meanwhile) and its endpoint exists; otherwise the upsert path.
      firstDelivered: db.prepare(`INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status, error, duration_ms, first_delivered)
        SELECT ?, ?, ?, ?, ?, ?, 1 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?)
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts INDEXED BY webhook_attempts_first_delivered WHERE endpoint_id = ? AND event_id = ? AND first_delivered = 1)`),
    };
    this.recentFrom = (this.statements.latest.get() as { seq: number }).seq;
    const { attempt, endpoint, firstDelivered, firstDeliveredKnown, upsert } = this.statements;
    this.transactions = {
      record: db.transaction((attempts: readonly DeliveryAttempt[], until: number): number => {
        // Per endpoint of the batch: whether it still exists, and the deliveries written as first deliveries without checks.
        const known = new Map<string, Set<string> | null>();
        // In order: when a delivery appears twice, each attempt counts.
        for (const one of attempts) {
          if (one.state === 'DELIVERED' && one.rowless === this.rowPasses) {
            let written = known.get(one.endpointId);
            if (written === undefined) {
              written = endpoint.get(one.endpointId) === undefined ? null : new Set();
              known.set(one.endpointId, written);
            }
            // Unless its endpoint is gone (nothing to write) or it was written already in this batch (the checks below then apply).
            if (written === null) continue;
            if (!written.has(one.eventId)) {
              written.add(one.eventId);
              firstDeliveredKnown.run(one.eventId, one.endpointId, one.attemptedAt, one.status, one.error, one.durationMs);
              continue;
            }
          }
          if (
            one.state === 'DELIVERED' &&
            firstDelivered.run(
              one.eventId,
              one.endpointId,
              one.attemptedAt,
              one.status,
              one.error,
              one.durationMs,
              one.endpointId,
              one.eventId,
              one.endpointId,
              one.endpointId,
              one.eventId,
            ).changes === 1
          ) {
            continue;
          }
          if (upsert.run(one.eventId, one.endpointId, one.state, one.nextAttemptAt, one.endpointId, one.endpointId, one.eventId).changes === 0) continue;
          attempt.run(one.eventId, one.endpointId, one.attemptedAt, one.status, one.error, one.durationMs);
        }
        return until > 0 ? this.materialize(until) : 0;
      }),
    };
  }

  /**
   * Commits without waiting for the disk (synchronous = NORMAL for this one
   * transaction; the connection's own setting, FULL, is put back at once).
   * What it writes is the dispatcher's bookkeeping, derived from events that
   * were committed in full: in WAL mode a process crash loses none of it, and
   * a power loss or OS crash can only roll back its last writes, whole, before
   * the next synced commit. Then those deliveries are due again (PENDING,
   * or without a row past the cursor, which moves in the same transaction)
   * and sent again: at-least-once holds, no event is lost, no attempt skipped.
   */
  record(attempts: readonly DeliveryAttempt[], fanOut: boolean): number {
    if (attempts.length === 0 && !fanOut) return 0;
    const until = fanOut ? this.noteNewEvents() : 0;
    // A pass that only notes new events writes nothing: no transaction (a lone event's pass, a poll).
    if (attempts.length === 0 && until === 0) return 0;
    this.pendingDue = undefined;
    this.statements.relaxed.run();
    let created: number;
    try {
      // IMMEDIATE: the cursor is read and moved under one write lock, never a read lock upgraded.
      created = this.transactions.record.immediate(attempts, until);
    } finally {
      this.statements.restore.run();
    }
    if (created > 0) this.rowPasses += 1;
    // Committed: what the cursor passed is read from the PENDING rows from now on.
    if (until > 0) {
      this.forgetRecent(until);
      while (this.seen.length > 0 && this.seen[0]!.seq <= until) this.seen.shift();
      for (const [accountId, newest] of this.accountsLatest) {
        if (newest > until) continue;
        this.accountsLatest.delete(accountId);
        this.accountEndpoints.delete(accountId);
      }
    }
    return created;
  }

  /** The endpoints with PENDING rows due, and those with events past where their fresh deliveries were read, in id order. */
  endpointsWithDue(now: string): string[] {
    const due = this.statements.endpointsWithDue.all(now) as string[];
    this.pendingDue = new Set(due);
    this.pendingDueAt = now;
    if (this.accountsLatest.size === 0) return due;
    const cursor = this.cursor();
    const all = new Set(due);
    for (const [accountId, newest] of this.accountsLatest) {
      if (newest <= cursor) continue;
      for (const endpointId of this.accountEndpoints.get(accountId) ?? []) {
        if (Math.max(cursor, this.freshFrom.get(endpointId) ?? 0) < newest) all.add(endpointId);
      }
    }
    return all.size === due.length ? due : [...all].sort();
  }

  /**
   * Per lane, its PENDING rows due (past `after`, leaving out those in hand)
   * and its fresh deliveries (read on from where the last read stopped, so
   * none is taken twice), merged oldest first, `room` at most.
   */
  due(claim: DueClaim): DueDelivery[] {
    // Their bodies are filled in below, from the cache or read once per event.
    const picked: DueDelivery[] = [];
    const cursor = this.accountsLatest.size === 0 ? 0 : this.cursor();
    // Known from endpointsWithDue at the same time, nothing written since: the endpoints without PENDING rows due need no read of them.
    const pendingDue = claim.now === this.pendingDueAt ? this.pendingDue : undefined;
    this.pendingDue = undefined;
    for (const [endpointId, { room, after, inHand }] of claim.lanes) {
      if (room <= 0) continue;
      const endpointRow = this.statements.endpoint.get(endpointId) as EndpointRow | undefined;
      if (endpointRow === undefined) {
        this.freshFrom.delete(endpointId);
        continue;
      }
      const pending =
        pendingDue !== undefined && !pendingDue.has(endpointId)
          ? NONE
          : (this.statements.dueFor.all({
              endpointId,
              now: claim.now,
              afterDueAt: after?.dueAt ?? '',
              afterEventId: after?.eventId ?? '',
              inHand: JSON.stringify(typeof inHand === 'function' ? inHand() : inHand),
              room,
            }) as PendingRow[]);
      const from = Math.max(cursor, this.freshFrom.get(endpointId) ?? 0);
      const newest = this.accountsLatest.get(endpointRow.account_id) ?? 0;
      const fresh =
        newest <= from
          ? NONE
          : from >= this.recentFrom && from >= (this.recent.get(endpointRow.account_id)?.trimmed ?? 0)
            ? this.recentFor(endpointRow.account_id, endpointId, from, endpointRow.created_at, room)
            : (this.statements.freshFor.all({
                accountId: endpointRow.account_id,
                endpointId,
                from,
                to: this.latest,
                since: endpointRow.created_at,
                room,
              }) as FreshRow[]);
      if (pending.length === 0 && fresh.length === 0) {
        if (newest > from) this.freshFrom.set(endpointId, this.latest);
        continue;
      }
      const endpoint = {
        id: endpointRow.id,
        accountId: endpointRow.account_id,
        url: endpointRow.url,
        secret: endpointRow.secret,
        createdAt: endpointRow.created_at,
      };
      let p = 0;
      let f = 0;
      while (p + f < room && (p < pending.length || f < fresh.length)) {
        const next = pending[p];
        const candidate = fresh[f];
        if (
          candidate !== undefined &&
          (next === undefined || candidate.created_at < next.next_attempt_at || (candidate.created_at === next.next_attempt_at && candidate.id < next.event_id))
        ) {
          picked.push({ eventId: candidate.id, body: '', endpoint, attempts: 0, dueAt: candidate.created_at, rowless: this.rowPasses });
          f += 1;
        } else if (next !== undefined) {
          picked.push({ eventId: next.event_id, body: '', endpoint, attempts: next.attempts, dueAt: next.next_attempt_at, rowless: undefined });
          p += 1;
        }
      }
      // Read to the newest event and all taken: nothing more of its own until new events come.
      if (f === fresh.length && fresh.length < room) {
        if (newest > from) this.freshFrom.set(endpointId, this.latest);
      } else if (f > 0) {
        this.freshFrom.set(endpointId, fresh[f - 1]!.seq);
      }
    }
    return this.withBodies(picked);
  }

  /** An endpoint's fresh deliveries from the events in memory, as freshFor reads them: past `from`, of its time and for it, `room` at most. */
  private recentFor(accountId: string, endpointId: string, from: number, since: string, room: number): FreshRow[] {
    const events = this.recent.get(accountId)?.events;
    const found: FreshRow[] = [];
    if (events === undefined) return found;
    // The first event past `from`: a binary search, the list being in seq order.
    let low = 0;
    for (let high = events.length; low < high;) {
      const middle = (low + high) >>> 1;
      if (events[middle]!.seq <= from) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < events.length && found.length < room; index++) {
      const event = events[index]!;
      if (event.created_at >= since && (event.endpoint_id === null || event.endpoint_id === endpointId)) found.push(event);
    }
    return found;
  }

  /** The cursor moved to `until`: the events up to it are read from the PENDING rows from now on. */
  private forgetRecent(until: number): void {
    if (until > this.recentFrom) this.recentFrom = until;
    for (const [accountId, held] of this.recent) {
      this.dropRecent(held, until);
      if (held.events.length === 0 && held.trimmed <= this.recentFrom) this.recent.delete(accountId);
    }
  }

  /** Lets go of the events every endpoint of their account has read past: no fresh read asks for them again. */
  private trimRecent(): void {
    for (const [accountId, held] of this.recent) {
      let readTo = Infinity;
      for (const endpointId of this.accountEndpoints.get(accountId) ?? []) readTo = Math.min(readTo, this.freshFrom.get(endpointId) ?? 0);
      if (readTo === Infinity || readTo <= held.trimmed) continue;
      held.trimmed = readTo;
      this.dropRecent(held, readTo);
    }
  }

  private dropRecent(held: { events: RecentEvent[] }, upTo: number): void {
    let passed = 0;
    while (passed < held.events.length && held.events[passed]!.seq <= upTo) passed += 1;
    if (passed === 0) return;
    this.recentCount -= passed;
    held.events.splice(0, passed);
  }

  private cursor(): number {
    return (this.statements.cursor.get() as { event_seq: number }).event_seq;
  }

  /**
   * Notes the events recorded since the last pass (their deliveries are
   * fresh: due, read from the outbox) and returns how far the cursor may
   * move: past the events seen more than the window ago (0: not at all).
   */
  private noteNewEvents(): number {
    const to = (this.statements.latest.get() as { seq: number }).seq;
    const nowMs = this.clock.now().getTime();
    if (to > this.latest) {
      const from = Math.max(this.latest, this.cursor());
      this.trimRecent();
      if (from >= this.recentFrom && this.recentCount + (to - from) <= this.recentEvents) {
        // Read once, for every endpoint: held for the fresh reads.
        const accounts = new Set<string>();
        for (const row of this.statements.newEvents.all(from, to) as NewEventRow[]) {
          accounts.add(row.account_id);
          this.accountsLatest.set(row.account_id, row.seq);
          let held = this.recent.get(row.account_id);
          if (held === undefined) this.recent.set(row.account_id, (held = { events: [], trimmed: 0 }));
          held.events.push({ seq: row.seq, id: row.id, created_at: row.created_at, endpoint_id: row.endpoint_id });
          this.recentCount += 1;
        }
        for (const accountId of accounts) this.accountEndpoints.set(accountId, this.statements.endpointsOf.all(accountId) as string[]);
      } else {
        // Too many at once: read from the outbox per endpoint, as before the store held any.
        this.recent.clear();
        this.recentCount = 0;
        this.recentFrom = to;
        for (const row of this.statements.newSince.all(from, to) as Array<{ account_id: string; seq: number }>) {
          this.accountsLatest.set(row.account_id, row.seq);
          this.accountEndpoints.set(row.account_id, this.statements.endpointsOf.all(row.account_id) as string[]);
        }
      }
      this.latest = to;
      this.seen.push({ seq: to, atMs: nowMs });
    }
    let until = 0;
    for (const { seq, atMs } of this.seen) {
      if (atMs > nowMs - this.firstAttemptWindowMs) break;
      until = seq;
    }
    return until;
  }

  /**
   * Moves the cursor to `until`, writing a PENDING row for each delivery of
   * the events it passes that has none yet (not attempted within the
   * window). Inside the write transaction. Returns the rows written.
   */
  private materialize(until: number): number {
    const from = this.cursor();
    if (until <= from) return 0;
    const created = this.statements.fanOut.run(from, until).changes;
    this.statements.advance.run(until);
    return created;
  }

  /**
   * Gives each delivery its event's body: from the cache, or serialized from
   * the events not in it, each once, read in one statement. The cache keeps
   * the BODY_CACHE_EVENTS read last (an event is read once, when its first
   * delivery is claimed, and its other endpoints' are claimed soon after);
   * the oldest are let go only once the deliveries have their bodies.
   */
  private withBodies(deliveries: DueDelivery[]): DueDelivery[] {
    let missing: Set<string> | undefined;
    for (const delivery of deliveries) {
      const body = this.bodies.get(delivery.eventId);
      if (body === undefined) (missing ??= new Set()).add(delivery.eventId);
      else delivery.body = body;
    }
    if (missing === undefined) return deliveries;
    for (const row of this.statements.events.all(JSON.stringify([...missing])) as EventRow[]) {
      this.bodies.set(
        row.id,
        serializedEventBody({ id: row.id, accountId: row.account_id, type: row.type, createdAt: new Date(row.created_at) }, this.payloads.of(row)),
      );
    }
    const found: DueDelivery[] = [];
    for (const delivery of deliveries) {
      if (delivery.body === '') {
        const body = this.bodies.get(delivery.eventId);
        // A delivery outlives its event only if the event was deleted with its account, endpoints included.
        if (body === undefined) continue;
        delivery.body = body;
      }
      found.push(delivery);
    }
    for (const oldest of this.bodies.keys()) {
      if (this.bodies.size <= BODY_CACHE_EVENTS) break;
      this.bodies.delete(oldest);
    }
    return found;
  }
}
