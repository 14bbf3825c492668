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

export interface DueClaim {
  now: string;
  /** How many deliveries to take, at most, by endpoint id. */
  rooms: ReadonlyMap<string, number>;
  /** The event ids of the deliveries the dispatcher holds, by endpoint id: never taken twice. */
  inHand: ReadonlyMap<string, ReadonlySet<string>>;
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
