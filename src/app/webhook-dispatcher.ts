/**
 * The dispatcher (DESIGN.md): reads the outbox, fans each event out to the
 * endpoints its account had when it was recorded, and delivers it signed,
 * retrying on SPEC.md's schedule. State lives in the database, so a restart
 * resumes where it stopped; deliveries in flight run in parallel up to a
 * bound, so one slow endpoint does not hold back the others.
 */
import type { Clock } from '../domain/clock.js';
import { eventBody } from '../domain/events/event.js';
import { MAX_DELIVERY_ATTEMPTS, nextAttemptAt } from '../domain/webhooks/retry-schedule.js';
import type { TimerHandle, Timers } from './controller/timer.js';
import type { DueDelivery, WebhookDeliveryRepository, WebhookEndpoint } from './ports.js';

export interface DeliveryOutcome {
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

/** Sends one signed request; the HTTPS adapter implements it. Never throws for delivery problems. */
export type DeliverWebhook = (endpoint: WebhookEndpoint, body: string, timestampMs: number) => Promise<DeliveryOutcome>;

export interface WebhookDispatcherOptions {
  deliveries: WebhookDeliveryRepository;
  deliver: DeliverWebhook;
  clock: Clock;
  timers: Timers;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** How often the outbox is looked at. */
  intervalMs?: number;
}

export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: TimerHandle | undefined;
  private stopped = true;

  constructor(private readonly options: WebhookDispatcherOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer);
    await Promise.all(this.inFlight.values());
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.options.timers.setTimeout(() => {
      void this.tick().finally(() => this.schedule(this.options.intervalMs ?? 1000));
    }, delayMs);
  }

  /** One pass: fan new events out, then start every due delivery that fits; resolves when they are all done. */
  async tick(): Promise<void> {
    this.options.deliveries.fanOut();
    const free = (this.options.concurrency ?? 8) - this.inFlight.size;
    if (free <= 0) return;
    const due = this.options.deliveries.due(this.options.clock.now().toISOString(), free + this.inFlight.size);
    const started = due.filter((delivery) => !this.inFlight.has(keyOf(delivery))).slice(0, free);
    await Promise.all(started.map((delivery) => this.track(delivery)));
  }

  private track(delivery: DueDelivery): Promise<void> {
    const key = keyOf(delivery);
    const running = this.attempt(delivery).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, running);
    return running;
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    // The same event id, and the same body, on every endpoint and every attempt.
    const body = JSON.stringify(eventBody(delivery.event));
    const outcome = await this.options.deliver(delivery.endpoint, body, this.options.clock.now().getTime());
    const at = this.options.clock.now();
    const attemptNumber = delivery.attempts + 1;
    const retryAt = outcome.ok ? undefined : nextAttemptAt(at, attemptNumber);
    this.options.deliveries.recordAttempt({
      eventId: delivery.event.id,
      endpointId: delivery.endpoint.id,
      attemptedAt: at.toISOString(),
      status: outcome.status ?? null,
      error: outcome.error ?? null,
      durationMs: Math.round(outcome.durationMs),
      state: outcome.ok ? 'DELIVERED' : retryAt === undefined || attemptNumber >= MAX_DELIVERY_ATTEMPTS ? 'FAILED' : 'PENDING',
      nextAttemptAt: (retryAt ?? at).toISOString(),
    });
  }
}

function keyOf(delivery: DueDelivery): string {
  return `${delivery.event.id}\u0000${delivery.endpoint.id}`;
}
