/**
 * Webhook endpoints and deliveries, as stored. Moved from src/app/ports/webhooks.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  secret: string;
  createdAt: string;
}

export interface DueDelivery {
  eventId: string;
  /** The serialized Event object: the same bytes to every endpoint and on every attempt. */
  body: string;
  endpoint: WebhookEndpoint;
  attempts: number;
  /** Its next_attempt_at when it was taken: its position in the endpoint's queue. */
  dueAt: string;
  /**
   * Set by the store on a delivery it read from the outbox, which had no
   * delivery row then: the store's count of passes that wrote rows for such
   * deliveries, at that time. Carried to its attempt (DeliveryAttempt), it
   * lets the store write the outcome without asking SQLite whether a row
   * appeared meanwhile.
   */
  rowless?: number | undefined;
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
  /** The delivery's DueDelivery.rowless, when it had one. */
  rowless?: number | undefined;
}

/** Where a PENDING delivery stands in its endpoint's queue: oldest due first, then by event id. */
export interface DuePosition {
  dueAt: string;
  eventId: string;
}

/** What one endpoint's claim asks for. */
export interface LaneClaim {
  /** How many deliveries to take, at most. */
  room: number;
  /** Take only deliveries past this position: those before it were taken already. Without it, from the oldest. */
  after?: DuePosition;
  /**
   * Event ids of deliveries the dispatcher holds past `after` (all it holds,
   * without it): never taken twice. Or a function that lists them, called
   * only if the endpoint has PENDING rows due (most claims read only new
   * events, and the list is as long as what the endpoint holds).
   */
  inHand: readonly string[] | (() => readonly string[]);
}

export interface DueClaim {
  now: string;
  /** By endpoint id. */
  lanes: ReadonlyMap<string, LaneClaim>;
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
