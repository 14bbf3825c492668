import type { EventOutbox } from '../app/ports.js';
import type { OutboxEvent } from '../domain/events/event.js';
import type { Database } from './database.js';

export class SqliteEventOutbox implements EventOutbox {
  private readonly insert;

  constructor(db: Database) {
    this.insert = db.prepare('INSERT INTO events (id, account_id, type, payload, created_at, endpoint_id) VALUES (?, ?, ?, ?, ?, ?)');
  }

  append(events: readonly OutboxEvent[]): void {
    for (const event of events) {
      this.insert.run(event.id, event.accountId, event.type, JSON.stringify(event.data), event.createdAt.toISOString(), event.endpointId ?? null);
    }
  }
}
