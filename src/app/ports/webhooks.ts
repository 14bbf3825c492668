export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  secret: string;
  createdAt: string;
}

export interface WebhookEndpointRepository {
  insert(endpoint: WebhookEndpoint): void;
  find(accountId: string, id: string): WebhookEndpoint | undefined;
  listFor(accountId: string): WebhookEndpoint[];
  delete(accountId: string, id: string): boolean;
}

export interface DueDelivery {
  eventId: string;
  /** The serialized Event object: the same bytes to every endpoint and on every attempt. */
  body: string;
  endpoint: WebhookEndpoint;
  attempts: number;
  /** Its next_attempt_at before it was claimed: where `release` puts it back. */
  dueAt: string;
}

export interface DeliveryAttempt {
  eventId: string;
  endpointId: string;
  attemptedAt: string;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The delivery's state after this attempt, and when to try again while PENDING. */
  state: 'PENDING' | 'DELIVERED' | 'FAILED';
  nextAttemptAt: string;
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

export interface DueClaim {
  now: string;
  until: string;
  rooms: ReadonlyMap<string, number>;
}

/** One delivery attempt as the dashboard's delivery log shows it. */
export interface LoggedAttempt {
  eventId: string;
  eventType: string;
  attemptedAt: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
}

/** The read side of delivery state, per endpoint: what the dashboard shows. */
export interface WebhookDeliveryLog {
  /** The endpoint's latest attempts, newest first. */
  attemptsFor(endpointId: string, limit: number): LoggedAttempt[];
  countsFor(endpointId: string): DeliveryCounts;
}
