import type { WebhookEndpoint, DueDelivery, DeliveryAttempt, DueClaim, LoggedAttempt, DeliveryCounts } from '../../domain/webhooks/delivery.js';
export type { WebhookEndpoint, DueDelivery, DeliveryAttempt, DueClaim, LoggedAttempt, DeliveryCounts } from '../../domain/webhooks/delivery.js';

export interface WebhookEndpointRepository {
  insert(endpoint: WebhookEndpoint): void;
  find(accountId: string, id: string): WebhookEndpoint | undefined;
  listFor(accountId: string): WebhookEndpoint[];
  delete(accountId: string, id: string): boolean;
}

/** Delivery state of webhook events, kept in the database so that a restart loses nothing (DESIGN.md 8). */
export interface WebhookDeliveryRepository {
  /** Creates a PENDING delivery for every new outbox event and every endpoint its account had when it was recorded. */
  fanOut(): number;
  /** The endpoints that have a PENDING delivery due at `now` or earlier. */
  endpointsWithDue(now: string): string[];
  /**
   * In one transaction, as each commit waits for the disk: records `attempts`,
   * then, given a claim, takes up to `rooms.get(endpoint)` due deliveries of
   * each endpoint, oldest first, and moves their next_attempt_at to `until`,
   * so that no later claim selects them while their attempt runs; should the
   * process die, they are due again at `until`. An attempt recorded, or
   * `release`, ends the claim.
   */
  recordAndClaim(attempts: readonly DeliveryAttempt[], claim?: DueClaim): DueDelivery[];
  /** Gives claimed deliveries that were never attempted their due time back. */
  release(deliveries: readonly DueDelivery[]): void;
}

/** The read side of delivery state, per endpoint: what the dashboard shows. */
export interface WebhookDeliveryLog {
  /** The endpoint's latest attempts, newest first. */
  attemptsFor(endpointId: string, limit: number): LoggedAttempt[];
  countsFor(endpointId: string): DeliveryCounts;
}
