import type { WebhookEndpoint, DueDelivery, DeliveryAttempt, DueClaim, LoggedAttempt, DeliveryCounts } from '../../domain/webhooks/delivery.js';
export type {
  WebhookEndpoint,
  DueDelivery,
  DeliveryAttempt,
  DueClaim,
  DuePosition,
  LaneClaim,
  LoggedAttempt,
  DeliveryCounts,
} from '../../domain/webhooks/delivery.js';

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
   * (the attempt log and each delivery's next state, its row written with its
   * first outcome) and, with `fanOut`, takes note of new outbox events: each
   * is due to every endpoint its account had when it was recorded, from the
   * outbox at first, as PENDING rows once the store's first-attempt window
   * has passed. Returns the PENDING rows written.
   */
  record(attempts: readonly DeliveryAttempt[], fanOut: boolean): number;
  /** The endpoints that have a delivery due at `now` or earlier (or may have: new events of their account not yet read). */
  endpointsWithDue(now: string): string[];
  /**
   * Reads, writing nothing: for each endpoint of `lanes`, up to `room` of its
   * deliveries due at `now`, oldest first: PENDING ones past `after` when
   * given, leaving out those `inHand`, and those of new events from where the
   * last read of the outbox stopped. The
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
