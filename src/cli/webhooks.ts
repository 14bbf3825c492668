/**
 * `vigil webhooks add | list | remove --account ID|NAME` (CONTRACT.md): the
 * same operations as the dashboard's. Secrets appear once, when added.
 */
import { loadSettings } from '../config/settings.js';
import type { WebhookEndpoint } from '../domain/webhooks/delivery.js';
import { composeCore, type Core } from '../main/composition-root.js';

function withCore(run: (core: Core) => void): number {
  const core = composeCore(loadSettings());
  try {
    run(core);
    return 0;
  } finally {
    core.db.close();
  }
}

/** `vigil webhooks add`: prints {"id","signing_secret"}. */
export async function addWebhook(options: { account: string; url: string }): Promise<number> {
  return withCore((core) => {
    const account = core.accounts.findAccount(options.account);
    const endpoint = core.webhookEndpoints.add(account.id, options.url);
    process.stdout.write(`${JSON.stringify({ id: endpoint.id, signing_secret: endpoint.secret })}\n`);
  });
}

function endpointJson(endpoint: WebhookEndpoint) {
  return { id: endpoint.id, url: endpoint.url, created_at: endpoint.createdAt };
}

/** `vigil webhooks list`: one JSON object a line, without secrets. */
export async function listWebhooks(options: { account: string }): Promise<number> {
  return withCore((core) => {
    const account = core.accounts.findAccount(options.account);
    process.stdout.write(
      core.webhookEndpoints
        .list(account.id)
        .map((endpoint) => `${JSON.stringify(endpointJson(endpoint))}\n`)
        .join(''),
    );
  });
}

/** `vigil webhooks remove`: another account's endpoint id is "not found", as on the API. */
export async function removeWebhook(options: { account: string; id: string }): Promise<number> {
  return withCore((core) => {
    const account = core.accounts.findAccount(options.account);
    core.webhookEndpoints.remove(account.id, options.id);
    process.stdout.write(`${JSON.stringify({ id: options.id, removed: true })}\n`);
  });
}
