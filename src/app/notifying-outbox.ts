import type { EventOutbox } from './ports.js';
import type { OutboxEvent } from '../domain/events/event.js';

/**
 * An outbox that tells its listeners when events were appended, so that the
 * webhook dispatcher starts on them at once instead of at its next poll.
 * Listeners run inside the appending transaction: they may only schedule
 * work for later (the events are not committed yet, and may never be).
 */
export class NotifyingOutbox implements EventOutbox {
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly outbox: EventOutbox) {}

  append(events: readonly OutboxEvent[]): void {
    this.outbox.append(events);
    if (events.length > 0) for (const listener of this.listeners) listener();
  }

  onAppended(listener: () => void): void {
    this.listeners.push(listener);
  }
}
