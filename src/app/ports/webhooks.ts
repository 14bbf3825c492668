import type { WebhookEndpoint, DueDelivery, DeliveryAttempt, DueClaim, LoggedAttempt, DeliveryCounts } from '../../domain/webhooks/delivery.js';
export type { WebhookEndpoint, DueDelivery, DeliveryAttempt, DueClaim, DuePosition, LaneClaim, LoggedAttempt, DeliveryCounts } from '../../domain/webhooks/delivery.js';

export interface WebhookEndpointRepository {
  insert(endpoint: WebhookEndpoint): void;
  find(accountId: string, id: string): WebhookEndpoint | undefined;
  listFor(accountId: string): WebhookEndpoint[];
  delete(accountId: string, id: string): boolean;
}

/** Delivery state of webhook events, kept in the database so that a restart loses nothing (DESIGN.md 8). */
export interface WebhookDeliveryRepository {
  /**
   * In one transaction, as each commit waits for the disk: records `attempts`
   * (the attempt log and each delivery's next state) and, with `fanOut`,
   * creates a PENDING delivery for every new outbox event and every endpoint
   * its account had when it was recorded. Returns the deliveries created.
   */
  record(attempts: readonly DeliveryAttempt[], fanOut: boolean): number;
  /** The endpoints that have a PENDING delivery due at `now` or earlier. */
  endpointsWithDue(now: string): string[];
  /**
   * Reads, writing nothing: for each endpoint of `lanes`, up to `room` of its
   * PENDING deliveries due at `now`, oldest first, past `after` when given,
   * leaving out those `inHand`. The
   * caller is the only dispatcher on the database (one `vigil serve`) and
   * keeps what it took in hand until its outcome is recorded, so nothing is
   * taken twice; should the process die, what it held is simply due still.
   */
  due(claim: DueClaim): DueDelivery[];
}

/** The read side of delivery state, per endpoint: what the dashboard shows. */
export interface WebhookDeliveryLog {
  /** The endpoint's latest attempts, newest first. */
  attemptsFor(endpointId: string, limit: number): LoggedAttempt[];
  countsFor(endpointId: string): DeliveryCounts;
}
