/**
 * Writes outbox events in multi-row INSERTs: a large scan records one event
 * per risk (45,000 for a 25 MB nmap upload, bench/ingest.ts), and one
 * statement call per event was a tenth of the upload's time. Rows keep the
 * order given, so their seq order is unchanged. An event no webhook endpoint
 * of its account would receive is not stored (event-receivers.ts).
 */
import type { OutboxEvent } from '../domain/events/event.js';
import type { Database } from './database.js';
import { SqliteEventReceivers } from './event-receivers.js';

/** Events per statement: 6 values each, far below SQLite's 32,766. */
const ROWS_PER_STATEMENT = 200;
const ROW = '(?, ?, ?, ?, ?, ?)';

export class EventRows {
  private readonly full;
  private readonly receivers;
  /**
   * Statements for a remainder, by its row count (fewer than ROWS_PER_STATEMENT), prepared once each: most writes carry one or two events (a scan's
   * state change), and preparing cost more than running.
   */
  private readonly partial = new Map<number, ReturnType<Database['prepare']>>();

  constructor(private readonly db: Database) {
    this.full = db.prepare(sql(ROWS_PER_STATEMENT));
    this.receivers = new SqliteEventReceivers(db);
  }

  insert(all: readonly OutboxEvent[]): void {
    const events = this.receivers.received(all);
    let start = 0;
    for (; start + ROWS_PER_STATEMENT <= events.length; start += ROWS_PER_STATEMENT) this.full.run(values(events, start, ROWS_PER_STATEMENT));
    if (start < events.length) this.statementFor(events.length - start).run(values(events, start, events.length - start));
  }

  private statementFor(rows: number) {
    let statement = this.partial.get(rows);
    if (statement === undefined) {
      statement = this.db.prepare(sql(rows));
      this.partial.set(rows, statement);
    }
    return statement;
  }
}

function sql(rows: number): string {
  return `INSERT INTO events (id, account_id, type, payload, created_at, endpoint_id) VALUES ${Array.from({ length: rows }, () => ROW).join(', ')}`;
}

function values(events: readonly OutboxEvent[], start: number, count: number): unknown[] {
  const list: unknown[] = [];
  for (let index = start; index < start + count; index++) {
    const event = events[index]!;
    list.push(event.id, event.accountId, event.type, JSON.stringify(event.data), event.createdAt.toISOString(), event.endpointId ?? null);
  }
  return list;
}

/** The columns an event's data is read from. */
export interface StoredPayload {
  seq: number;
  payload: string;
  parts: number;
}

/**
 * An event's data as JSON text: its payload, followed by its parts in order
 * when it was stored in parts (a chunked recording's scan event,
 * RecordingStaging.addEventPart; migration 0032).
 */
export class EventPayloads {
  private readonly parts;

  constructor(db: Database) {
    this.parts = db.prepare('SELECT text FROM event_parts WHERE event_seq = ? ORDER BY part').pluck();
  }

  of(row: StoredPayload): string {
    if (row.parts === 0) return row.payload;
    const parts = this.parts.all(row.seq) as string[];
    if (parts.length !== row.parts) throw new Error(`event ${row.seq} has ${parts.length} of its ${row.parts} parts`);
    return row.payload + parts.join('');
  }
}
