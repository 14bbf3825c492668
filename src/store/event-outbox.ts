import type { EventOutbox } from '../app/ports.js';
import type { OutboxEvent } from '../domain/events/event.js';
import type { Database } from './database.js';
import { EventRows } from './event-rows.js';

export class SqliteEventOutbox implements EventOutbox {
  private readonly rows;

  constructor(db: Database) {
    this.rows = new EventRows(db);
  }

  append(events: readonly OutboxEvent[]): void {
    this.rows.insert(events);
  }
}
