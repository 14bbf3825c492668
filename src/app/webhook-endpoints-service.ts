/**
 * Webhook endpoints (SPEC.md: registered in the dashboard only; CONTRACT.md:
 * also `vigil webhooks add`). Each gets its own signing secret.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { NotFoundError } from '../domain/errors.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import { parseWebhookEndpointUrl } from '../domain/webhooks/endpoint-url.js';
import type { AccountRepository, WebhookEndpoint, WebhookEndpointRepository } from './ports.js';

export class WebhookEndpointsService {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly accounts: AccountRepository,
    private readonly clock: Clock,
    private readonly allowTargets: readonly Cidr[],
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

  list(accountId: string): WebhookEndpoint[] {
    return this.endpoints.listFor(accountId);
  }

  remove(accountId: string, id: string): void {
    if (!this.endpoints.delete(accountId, id)) throw new NotFoundError('webhook endpoint', id);
  }
}
