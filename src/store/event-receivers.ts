/**
 * Whether an event has a receiver (README, Webhooks): events exist only to be
 * delivered to the account's webhook endpoints, and an endpoint receives the
 * events that happen after it is registered (the fan-out's rule,
 * webhook-deliveries-repository.ts). An event that no endpoint of its account
 * would receive when it happens is not stored: with no endpoint, a
 * 45,000-finding upload wrote 56 MB of event payloads nobody could ever
 * receive (bench/ingest.ts).
 */
import type { EventReceivers } from '../app/ports.js';
import type { OutboxEvent } from '../domain/events/event.js';
import type { Database } from './database.js';

export class SqliteEventReceivers implements EventReceivers {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      earliest: db.prepare('SELECT MIN(created_at) FROM webhook_endpoints WHERE account_id = ?').pluck(),
      one: db.prepare('SELECT created_at FROM webhook_endpoints WHERE account_id = ? AND id = ?').pluck(),
    };
  }

  receivesEvents(accountId: string, at: Date): boolean {
    const earliest = this.statements.earliest.get(accountId) as string | null;
    return earliest !== null && earliest <= at.toISOString();
  }

  /** The events that some endpoint of their account receives, in the order given (a test event: its one endpoint). */
  received(events: readonly OutboxEvent[]): readonly OutboxEvent[] {
    if (events.length === 0) return events;
    // One probe per account: an endpoint registered by then receives every event from its registration on.
    const earliest = new Map<string, string | null>();
    const kept = events.filter((event) => {
      const at = event.createdAt.toISOString();
      if (event.endpointId !== undefined) {
        const registered = this.statements.one.get(event.accountId, event.endpointId) as string | undefined;
        return registered !== undefined && registered <= at;
      }
      let first = earliest.get(event.accountId);
      if (first === undefined) {
        first = (this.statements.earliest.get(event.accountId) as string | null) ?? null;
        earliest.set(event.accountId, first);
      }
      return first !== null && first <= at;
    });
    return kept.length === events.length ? events : kept;
  }
}
