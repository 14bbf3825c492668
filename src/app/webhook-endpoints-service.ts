/**
 * Webhook endpoints (SPEC.md: registered in the dashboard only; CONTRACT.md:
 * also `vigil webhooks add`). Each gets its own signing secret.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { NotFoundError } from '../domain/errors.js';
import { testEvent, type OutboxEvent } from '../domain/events/event.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import { parseWebhookEndpointUrl } from '../domain/webhooks/endpoint-url.js';
import type { AccountRepository, DeliveryCounts, EventOutbox, LoggedAttempt, WebhookDeliveryLog, WebhookEndpoint, WebhookEndpointRepository } from './ports.js';

/** How many attempts the delivery log shows. */
const DELIVERY_LOG_LENGTH = 50;

export interface DeliveryLog {
  counts: DeliveryCounts;
  /** The latest attempts, newest first. */
  attempts: LoggedAttempt[];
}

export class WebhookEndpointsService {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly accounts: AccountRepository,
    private readonly clock: Clock,
    private readonly allowTargets: readonly Cidr[],
    private readonly outbox: EventOutbox,
    private readonly deliveries: WebhookDeliveryLog,
  ) {}

  /** Registers an https endpoint whose host is public (or allowed); returns it with its new secret. */
  add(accountId: string, url: string): WebhookEndpoint {
    if (this.accounts.findById(accountId) === undefined) throw new NotFoundError('account', accountId);
    const parsed = parseWebhookEndpointUrl(url, this.allowTargets);
    const endpoint: WebhookEndpoint = {
      id: randomUUID(),
      accountId,
      url: parsed.url,
      secret: `whsec_${randomBytes(32).toString('base64url')}`,
      createdAt: this.clock.now().toISOString(),
    };
    this.endpoints.insert(endpoint);
    return endpoint;
  }

  get(accountId: string, id: string): WebhookEndpoint {
    const endpoint = this.endpoints.find(accountId, id);
    if (endpoint === undefined) throw new NotFoundError('webhook endpoint', id);
    return endpoint;
  }

  /** Records a `webhook.test` event for this endpoint only; the dispatcher delivers it like any other. */
  sendTestEvent(accountId: string, id: string): OutboxEvent {
    const event = testEvent(accountId, this.get(accountId, id).id, this.clock.now());
    this.outbox.append([event]);
    return event;
  }

  deliveryLog(accountId: string, id: string): DeliveryLog {
    const endpoint = this.get(accountId, id);
    return { counts: this.deliveries.countsFor(endpoint.id), attempts: this.deliveries.attemptsFor(endpoint.id, DELIVERY_LOG_LENGTH) };
  }

  list(accountId: string): WebhookEndpoint[] {
    return this.endpoints.listFor(accountId);
  }

  remove(accountId: string, id: string): void {
    if (!this.endpoints.delete(accountId, id)) throw new NotFoundError('webhook endpoint', id);
  }
}
