/**
 * A local HTTPS webhook receiver for trying Vigil's events: prints each event
 * it receives and whether its signature verifies with WEBHOOK_SECRET (the
 * endpoint's signing secret, shown in the dashboard). On its first start it
 * makes a throwaway CA and a certificate for 127.0.0.1 with openssl, kept in
 * WEBHOOK_RECEIVER_DIR (default ./data/webhook-receiver); start Vigil with
 * VIGIL_WEBHOOK_CA_FILE pointing at its ca.crt and VIGIL_ALLOW_TARGETS=127.0.0.0/8.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { verifyWebhook } from '../src/domain/webhooks/signature.js';
import { makeCertificates, startReceiver } from '../test/support/https-receiver.js';
import { WEBHOOK_RECEIVER_DEFAULT_PORT } from './sink-ports.js';

const dir = resolve(process.env.WEBHOOK_RECEIVER_DIR ?? 'data/webhook-receiver');
const port = Number(process.env.WEBHOOK_RECEIVER_PORT ?? WEBHOOK_RECEIVER_DEFAULT_PORT);
const secret = process.env.WEBHOOK_SECRET;

if (!existsSync(resolve(dir, 'server.crt'))) {
  mkdirSync(dir, { recursive: true });
  makeCertificates(dir);
}
const read = (name: string) => readFileSync(resolve(dir, name), 'utf8');

const receiver = await startReceiver(
  read('server.key'),
  read('server.crt'),
  (request, response) => {
    const latest = receiver.requests.at(-1)!;
    const timestamp = String(latest.headers['x-service-timestamp'] ?? '');
    const signature = String(latest.headers['x-service-signature'] ?? '');
    if (request.method !== 'POST' || signature === '') {
      // Anything on this port is printed (a browser, curl, a scan given this port): say it is no delivery.
      process.stdout.write(`${new Date().toISOString()} ${request.method} ${request.url} ignored: not a webhook delivery (no X-SERVICE-SIGNATURE)\n`);
      response.writeHead(404).end();
      return;
    }
    let event: { id?: string; type?: string; data?: { id?: string; state?: string; status?: string } } = {};
    try {
      event = JSON.parse(latest.body);
    } catch {
      // printed as not JSON below
    }
    const verdict =
      secret === undefined ? 'not checked (set WEBHOOK_SECRET)' : verifyWebhook(secret, timestamp, latest.body, signature) ? 'verified' : 'DOES NOT VERIFY';
    process.stdout.write(
      `${new Date().toISOString()} ${request.method} ${request.url} ${event.type ?? 'not JSON'} event ${event.id ?? '?'} data ${event.data?.id ?? '?'} ${event.data?.state ?? event.data?.status ?? ''} signature ${verdict}\n`,
    );
    response.writeHead(204).end();
  },
  port,
);

process.stdout.write(
  `webhook receiver listening on https://127.0.0.1:${receiver.port}/hooks\n` +
    `start Vigil with: VIGIL_ALLOW_TARGETS=127.0.0.0/8 VIGIL_WEBHOOK_CA_FILE=${resolve(dir, 'ca.crt')}\n`,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void receiver.close().then(() => process.exit(0)));
