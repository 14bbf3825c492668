/**
 * The webhook dispatcher on a real SQLite store: fan-out, signed delivery,
 * retries on SPEC.md's schedule with an injected clock (no sleeping), giving
 * up after 10 attempts, a restart that loses nothing, accounts never
 * crossing; and one run end to end from a real scan to a real HTTPS receiver.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeTimers } from '../../src/app/controller/timer.js';
import { WebhookDispatcher, type DeliveryOutcome } from '../../src/app/webhook-dispatcher.js';
import type { WebhookEndpoint } from '../../src/app/ports.js';
import { loadSettings } from '../../src/config/settings.js';
import { newEvent } from '../../src/domain/events/event.js';
import { verifyWebhook } from '../../src/domain/webhooks/signature.js';
import { composeCore } from '../../src/main/composition-root.js';
import { SqliteWebhookDeliveryRepository } from '../../src/store/webhook-deliveries-repository.js';
import { makeCertificates, startReceiver } from '../support/https-receiver.js';
import { tcpListener } from '../support/listeners.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

describe('webhook dispatcher', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let timers: FakeTimers;
  let sent: Array<{ endpoint: string; body: string; timestampMs: number }>;
  let answer: (endpoint: WebhookEndpoint) => DeliveryOutcome;

  const clock = () => ({ now: () => new Date(timers.now()) });
  const dispatcher = () =>
    new WebhookDispatcher({
      deliveries: new SqliteWebhookDeliveryRepository(core.db),
      deliver: async (endpoint, body, timestampMs) => {
        sent.push({ endpoint: endpoint.url, body, timestampMs });
        return answer(endpoint);
      },
      clock: clock(),
      timers,
    });

  beforeEach(() => {
    dir = tempDir();
    timers = new FakeTimers(Date.parse('2026-11-21T10:00:00.000Z'));
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }), clock());
    sent = [];
    answer = () => ({ ok: true, status: 200, durationMs: 3 });
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  const account = (name: string) => core.accounts.createAccount({ name }).account;
  const record = (accountId: string, data: unknown) => {
    const event = newEvent(accountId, 'scan.created', data, new Date(timers.now()));
    core.outbox.append([event]);
    return event;
  };
  const deliveryState = () => core.db.prepare('SELECT state, attempts, next_attempt_at FROM webhook_deliveries').all() as Array<{ state: string; attempts: number; next_attempt_at: string }>;

  it('delivers each event once to every endpoint its account had when it was recorded, with the same id and body', async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://one.example.com/hook');
    core.webhookEndpoints.add(acme.id, 'https://two.example.com/hook');
    const event = record(acme.id, { id: 'scan-1' });
    timers.advance(1000);
    core.webhookEndpoints.add(acme.id, 'https://late.example.com/hook'); // registered after the event
    const run = dispatcher();
    await run.tick();
    await run.tick();
    expect(sent.map((delivery) => delivery.endpoint).sort()).to.deep.equal(['https://one.example.com/hook', 'https://two.example.com/hook']);
    expect(new Set(sent.map((delivery) => delivery.body)).size).to.equal(1);
    expect(JSON.parse(sent[0]!.body)).to.include({ id: event.id, type: 'scan.created', event_created_at: '2026-11-21T10:00:00.000Z', created_at: Date.parse('2026-11-21T10:00:00.000Z') });
    expect(deliveryState().map((row) => row.state)).to.deep.equal(['DELIVERED', 'DELIVERED']);
  });

  it("never sends one account's events to another account's endpoints", async () => {
    const acme = account('acme');
    const other = account('other');
    core.webhookEndpoints.add(other.id, 'https://other.example.com/hook');
    record(acme.id, { secret: 'acme data' });
    await dispatcher().tick();
    expect(sent).to.deep.equal([]);
  });

  it('retries a failure after about 10 seconds, then 5 minutes more each time, with the same event id', async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://flaky.example.com/hook');
    record(acme.id, {});
    answer = () => ({ ok: false, status: 500, durationMs: 2 });
    const run = dispatcher();
    await run.tick();
    expect(deliveryState()[0]).to.deep.include({ state: 'PENDING', attempts: 1, next_attempt_at: '2026-11-21T10:00:10.000Z' });
    timers.advance(9_000);
    await run.tick();
    expect(sent).to.have.length(1); // not due yet
    timers.advance(1_000);
    await run.tick();
    expect(deliveryState()[0]).to.deep.include({ attempts: 2, next_attempt_at: '2026-11-21T10:05:20.000Z' });
    answer = () => ({ ok: true, status: 204, durationMs: 2 });
    timers.advance(5 * 60_000 + 10_000);
    await run.tick();
    expect(deliveryState()[0]).to.deep.include({ state: 'DELIVERED', attempts: 3 });
    expect(new Set(sent.map((delivery) => JSON.parse(delivery.body).id)).size).to.equal(1);
    const log = core.db.prepare('SELECT status, error FROM webhook_attempts ORDER BY seq').all();
    expect(log).to.deep.equal([{ status: 500, error: null }, { status: 500, error: null }, { status: 204, error: null }]);
  });

  it('gives up after 10 attempts', async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://down.example.com/hook');
    record(acme.id, {});
    answer = () => ({ ok: false, error: 'connect ECONNREFUSED', durationMs: 1 });
    const run = dispatcher();
    for (let attempt = 0; attempt < 15; attempt++) {
      await run.tick();
      timers.advance(60 * 60_000);
    }
    expect(sent).to.have.length(10);
    expect(deliveryState()[0]).to.deep.include({ state: 'FAILED', attempts: 10 });
  });

  it('resumes after a restart: a new dispatcher on the same database continues where the old one stopped', async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://flaky.example.com/hook');
    record(acme.id, {});
    answer = () => ({ ok: false, status: 503, durationMs: 1 });
    await dispatcher().tick();
    answer = () => ({ ok: true, status: 200, durationMs: 1 });
    timers.advance(10_000);
    const restarted = dispatcher();
    await restarted.tick();
    expect(sent).to.have.length(2);
    expect(deliveryState()[0]).to.deep.include({ state: 'DELIVERED', attempts: 2 });
  });
});

describe('webhooks end to end: a real scan, a real HTTPS receiver', function () {
  this.timeout(60_000);

  it('delivers signed scan.created, scan.updated and risk.created events that verify with the secret', async () => {
    const certs = tempDir();
    const pems = makeCertificates(certs.path);
    const caFile = join(certs.path, 'ca.pem');
    writeFileSync(caFile, pems.caCert);
    const receiver = await startReceiver(pems.serverKey, pems.serverCert, (_request, response) => {
      response.writeHead(204);
      response.end();
    });
    const listener = await tcpListener();
    const service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8', VIGIL_WEBHOOK_CA_FILE: caFile } });
    try {
      const endpoint = service.vigil.webhookEndpoints.add(service.accountId, `https://127.0.0.1:${receiver.port}/vigil`);
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      await waitFor(async () => receiver.requests.map((request) => JSON.parse(request.body)), (events) => events.some((event) => event.type === 'risk.created') && events.some((event) => event.type === 'scan.updated' && event.data.state === 'SUCCEEDED'), 'the events');
      for (const request of receiver.requests) {
        expect(verifyWebhook(endpoint.secret, request.headers['x-service-timestamp'] as string, request.body, request.headers['x-service-signature'] as string)).to.equal(true);
      }
      const events = receiver.requests.map((request) => JSON.parse(request.body));
      expect(events[0]).to.deep.include({ type: 'scan.created' });
      expect(events[0].data.id).to.equal(scan.id);
      expect(new Set(events.map((event) => event.id)).size).to.equal(events.length);
    } finally {
      await service.stop();
      await receiver.close();
      await listener.close();
      certs.remove();
    }
  });
});
