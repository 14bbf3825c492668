/**
 * The webhook dispatcher on a real SQLite store: fan-out, signed delivery,
 * retries on SPEC.md's schedule with an injected clock (no sleeping), giving
 * up after 10 attempts, a restart that loses nothing, accounts never
 * crossing; bounded concurrency in all and per endpoint, with a slow endpoint
 * holding back only itself; and one run end to end from a real scan to a real
 * HTTPS receiver.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeTimers } from '../support/fake-timers.js';
import {
  RECORD_DELAY_MS,
  WebhookDispatcher,
  type DeliveryOutcome,
  type DeliverWebhook,
  type WebhookDispatcherOptions,
} from '../../src/app/webhook-dispatcher.js';
import type { WebhookEndpoint } from '../../src/app/ports.js';
import { loadSettings } from '../../src/config/settings.js';
import { newEvent } from '../../src/domain/events/event.js';
import { verifyWebhook } from '../../src/domain/webhooks/signature.js';
import { composeCore } from '../../src/main/composition-root.js';
import { FIRST_ATTEMPT_WINDOW_MS, SqliteWebhookDeliveryRepository } from '../../src/store/webhook-deliveries-repository.js';
import type { Database } from '../../src/store/database.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { createWebhookAgent, deliverWebhook } from '../../src/runtime/webhooks/https-delivery.js';
import { makeCertificates, startReceiver } from '../support/https-receiver.js';
import { tcpListener } from '../support/listeners.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';
import { seedRisks } from '../support/report-data.js';
import { SqlitePendingRecordings } from '../../src/store/pending-recordings-repository.js';
import { aTarget } from '../support/targets.js';

/** The real store, whose outcome writes fail (as on a full disk) while `writes.failing`. */
function failingWrites(db: Database, writes: { failing: boolean }): SqliteWebhookDeliveryRepository {
  const store = new SqliteWebhookDeliveryRepository(db);
  return Object.assign(Object.create(store) as SqliteWebhookDeliveryRepository, {
    record: (attempts: Parameters<typeof store.record>[0], fanOut: boolean) => {
      if (writes.failing && attempts.length > 0) throw new Error('database or disk is full');
      return store.record(attempts, fanOut);
    },
  });
}

describe('webhook dispatcher', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let timers: FakeTimers;
  let sent: Array<{ endpoint: string; body: string; timestampMs: number }>;
  let answer: (endpoint: WebhookEndpoint) => DeliveryOutcome;

  const clock = () => ({ now: () => new Date(timers.now()) });
  const dispatcher = (options: Partial<WebhookDispatcherOptions> = {}) =>
    new WebhookDispatcher({
      deliveries: new SqliteWebhookDeliveryRepository(core.db, { clock: clock() }),
      deliver: async (endpoint, body, timestampMs) => {
        sent.push({ endpoint: endpoint.url, body, timestampMs });
        return answer(endpoint);
      },
      clock: clock(),
      timers,
      ...options,
    });

  beforeEach(() => {
    dir = tempDir();
    timers = new FakeTimers(Date.parse('2026-11-21T10:00:00.000Z'));
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }), clock());
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
  /** What the dashboard shows for the endpoint at `url`: due deliveries count as pending whether or not they have a row yet. */
  const countsOf = (url: string) => {
    const endpoint = core.db.prepare('SELECT id, account_id FROM webhook_endpoints WHERE url = ?').get(url) as { id: string; account_id: string };
    return core.webhookEndpoints.deliveryLog(endpoint.account_id, endpoint.id).counts;
  };
  const deliveryState = () =>
    core.db.prepare('SELECT state, attempts, next_attempt_at FROM webhook_delivery_states').all() as Array<{
      state: string;
      attempts: number;
      next_attempt_at: string;
    }>;

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
    expect(JSON.parse(sent[0]!.body)).to.include({
      id: event.id,
      type: 'scan.created',
      event_created_at: '2026-11-21T10:00:00.000Z',
      created_at: Date.parse('2026-11-21T10:00:00.000Z'),
    });
    expect(deliveryState().map((row) => row.state)).to.deep.equal(['DELIVERED', 'DELIVERED']);
  });

  it('sends an endpoint added while the dispatcher runs the events recorded after it, and none from before', async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://one.example.com/hook');
    const run = dispatcher();
    record(acme.id, { n: 1 });
    await run.tick();
    timers.advance(1000);
    core.webhookEndpoints.add(acme.id, 'https://late.example.com/hook');
    timers.advance(1000);
    record(acme.id, { n: 2 });
    await run.tick();
    await run.tick();
    expect(sent.map((delivery) => `${delivery.endpoint} ${JSON.parse(delivery.body).data.n}`).sort()).to.deep.equal([
      'https://late.example.com/hook 2',
      'https://one.example.com/hook 1',
      'https://one.example.com/hook 2',
    ]);
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
    expect(log).to.deep.equal([
      { status: 500, error: null },
      { status: 500, error: null },
      { status: 204, error: null },
    ]);
  });

  it('records the outcomes of attempts that end together in one write, each with its own status, error, duration and next state', async () => {
    const acme = account('acme');
    for (const name of ['ok', 'server-error', 'refused']) core.webhookEndpoints.add(acme.id, `https://${name}.example.com/hook`);
    record(acme.id, { n: 1 });
    record(acme.id, { n: 2 });
    answer = ({ url }) =>
      url.includes('//ok.')
        ? { ok: true, status: 204, durationMs: 3 }
        : url.includes('server-error')
          ? { ok: false, status: 500, durationMs: 4 }
          : { ok: false, error: 'connect ECONNREFUSED', durationMs: 5 };
    await dispatcher().tick();
    expect(sent).to.have.length(6);
    const log = core.db
      .prepare(
        `SELECT w.url, a.status, a.error, a.duration_ms, a.attempted_at FROM webhook_attempts a JOIN webhook_endpoints w ON w.id = a.endpoint_id ORDER BY w.url, a.seq`,
      )
      .all();
    const at = '2026-11-21T10:00:00.000Z';
    expect(log).to.deep.equal([
      { url: 'https://ok.example.com/hook', status: 204, error: null, duration_ms: 3, attempted_at: at },
      { url: 'https://ok.example.com/hook', status: 204, error: null, duration_ms: 3, attempted_at: at },
      { url: 'https://refused.example.com/hook', status: null, error: 'connect ECONNREFUSED', duration_ms: 5, attempted_at: at },
      { url: 'https://refused.example.com/hook', status: null, error: 'connect ECONNREFUSED', duration_ms: 5, attempted_at: at },
      { url: 'https://server-error.example.com/hook', status: 500, error: null, duration_ms: 4, attempted_at: at },
      { url: 'https://server-error.example.com/hook', status: 500, error: null, duration_ms: 4, attempted_at: at },
    ]);
    const states = core.db
      .prepare(
        'SELECT w.url, d.state, d.attempts, d.next_attempt_at FROM webhook_delivery_states d JOIN webhook_endpoints w ON w.id = d.endpoint_id ORDER BY w.url',
      )
      .all() as Array<{ url: string; state: string; attempts: number; next_attempt_at: string }>;
    expect(states.map((row) => `${row.url} ${row.state} ${row.attempts} ${row.next_attempt_at}`)).to.deep.equal([
      `https://ok.example.com/hook DELIVERED 1 ${at}`,
      `https://ok.example.com/hook DELIVERED 1 ${at}`,
      'https://refused.example.com/hook PENDING 1 2026-11-21T10:00:10.000Z',
      'https://refused.example.com/hook PENDING 1 2026-11-21T10:00:10.000Z',
      'https://server-error.example.com/hook PENDING 1 2026-11-21T10:00:10.000Z',
      'https://server-error.example.com/hook PENDING 1 2026-11-21T10:00:10.000Z',
    ]);
  });

  it("puts the connection's full synchronous commits back after each of its own writes (which do not wait for the disk)", async () => {
    const acme = account('acme');
    core.webhookEndpoints.add(acme.id, 'https://one.example.com/hook');
    record(acme.id, {});
    const seen: number[] = [];
    const store = new SqliteWebhookDeliveryRepository(core.db);
    const deliveries = Object.assign(Object.create(store) as SqliteWebhookDeliveryRepository, {
      record: (attempts: Parameters<typeof store.record>[0], fanOut: boolean) => {
        const result = store.record(attempts, fanOut);
        seen.push(core.db.pragma('synchronous', { simple: true }) as number);
        return result;
      },
    });
    await dispatcher({ deliveries }).tick();
    expect(deliveryState()[0]).to.deep.include({ state: 'DELIVERED', attempts: 1 });
    expect(seen.length).to.be.greaterThan(0);
    expect(seen.every((level) => level === 2)).to.equal(true); // FULL, as src/store/database.ts opens it
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

  it("holds back a chunked recording's events, and every event after its first, until its last transaction; a rolled-back one's never go out", async () => {
    const acme = account('acme');
    const other = account('other');
    core.webhookEndpoints.add(acme.id, 'https://acme.example.com/hook');
    core.webhookEndpoints.add(other.id, 'https://other.example.com/hook');
    const target = aTarget(acme.id, '203.0.113.9');
    core.targetRepository.insert(target);
    const [kept, discarded] = seedRisks(core.db, [
      { accountId: acme.id, targetId: target.id },
      { accountId: acme.id, targetId: target.id },
    ]);
    const at = () => new Date(timers.now()).toISOString();
    /** A chunk of a recording under its pending marker: one risk event into the outbox, held. */
    const chunk = (scanId: string, riskId: string, eventId: string) =>
      core.db.transaction(() => core.staging.holdRiskEvents(scanId, at(), [[riskId, eventId, 'risk.created']]))();
    const ids = () => sent.map((delivery) => (JSON.parse(delivery.body) as { id: string }).id);
    const markers = new SqlitePendingRecordings(core.db);
    const run = dispatcher();

    /** A recording's scan event, its data in two parts (RiskHistory.holdScanEvent). */
    const scanEvent = (scanId: string, eventId: string) =>
      core.db.transaction(() => {
        const seq = core.staging.holdEvent(scanId, { id: eventId, accountId: acme.id, type: 'scan.created', createdAt: new Date(timers.now()) })!;
        core.staging.addEventPart(seq, `{"id":"${scanId}","risks":{"new_open":[{"risk_id":"${kept!.id}"}],`);
        core.staging.addEventPart(seq, '"still_open":[],"closed":[]}}');
      })();

    markers.begin('scan-kept', acme.id, 'IMPORT', at());
    chunk('scan-kept', kept!.id, 'held-1');
    scanEvent('scan-kept', 'held-scan-1');
    const after = record(other.id, { id: 'another account, meanwhile' });
    timers.advance(1000);
    await run.tick();
    await run.tick();
    expect(core.db.prepare("SELECT COUNT(*) AS n FROM events WHERE held_by = 'scan-kept'").get()).to.deep.equal({ n: 2 });
    expect(sent).to.deep.equal([]);

    markers.begin('scan-refused', acme.id, 'IMPORT', at());
    chunk('scan-refused', discarded!.id, 'held-2');
    scanEvent('scan-refused', 'held-scan-2');
    markers.end('scan-kept'); // the last transaction of the first recording
    timers.advance(1000);
    await run.tick();
    await run.tick();
    expect(ids().sort()).to.deep.equal(['held-1', 'held-scan-1', after.id].sort());
    expect(JSON.parse(sent.find((delivery) => delivery.body.includes('held-1'))!.body)).to.deep.include({ type: 'risk.created' });
    // The scan event's body: its parts in order, as one JSON document.
    expect(JSON.parse(sent.find((delivery) => delivery.body.includes('held-scan-1'))!.body)).to.deep.include({
      type: 'scan.created',
      data: { id: 'scan-kept', risks: { new_open: [{ risk_id: kept!.id }], still_open: [], closed: [] } },
    });

    core.history.rollBack(acme.id, 'scan-refused');
    expect(core.db.prepare("SELECT COUNT(*) AS n FROM events WHERE held_by = 'scan-refused'").get()).to.deep.equal({ n: 0 });
    // Its parts went with it.
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM event_parts').get()).to.deep.equal({ n: 2 });
    const later = record(acme.id, { id: 'after the rollback' });
    timers.advance(FIRST_ATTEMPT_WINDOW_MS);
    await run.tick();
    await run.tick();
    expect(ids().sort()).to.deep.equal(['held-1', 'held-scan-1', after.id, later.id].sort());
  });

  describe('in flight', () => {
    /** deliver() calls that stay open until the test answers them; counts what is open at once. */
    class OpenCalls {
      readonly open: Array<{ url: string; answer: () => void }> = [];
      answered = 0;
      maxOpen = 0;
      readonly maxOpenPerEndpoint = new Map<string, number>();
      readonly deliver: DeliverWebhook = (endpoint) =>
        new Promise((resolve) => {
          const call = {
            url: endpoint.url,
            answer: () => {
              this.open.splice(this.open.indexOf(call), 1);
              this.answered += 1;
              resolve({ ok: true, status: 204, durationMs: 1 });
            },
          };
          this.open.push(call);
          this.maxOpen = Math.max(this.maxOpen, this.open.length);
          this.maxOpenPerEndpoint.set(endpoint.url, Math.max(this.maxOpenPerEndpoint.get(endpoint.url) ?? 0, this.openTo(endpoint.url)));
        });

      openTo(url: string): number {
        return this.open.filter((call) => call.url === url).length;
      }

      answer(calls: ReadonlyArray<{ answer: () => void }>): void {
        for (const call of [...calls]) call.answer();
      }
    }
    /** One turn of the event loop: lets answered deliveries finish and the next ones start. No timer moves. */
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const endpoints = (accountId: string, names: string[]) =>
      names.map((name) => core.webhookEndpoints.add(accountId, name.startsWith('https:') ? name : `https://${name}.example.com/hook`).url);
    const states = () =>
      core.db
        .prepare(
          'SELECT w.url, d.state, COUNT(*) AS n FROM webhook_delivery_states d JOIN webhook_endpoints w ON w.id = d.endpoint_id GROUP BY 1, 2 ORDER BY 1, 2',
        )
        .all();

    it('keeps at most `concurrency` deliveries in flight in all and at most `perEndpoint` to one endpoint', async () => {
      const acme = account('acme');
      const urls = endpoints(acme.id, ['a', 'b', 'c', 'd', 'e', 'f']);
      for (let n = 0; n < 30; n++) record(acme.id, { n });
      const calls = new OpenCalls();
      const ticking = dispatcher({ deliver: calls.deliver, concurrency: 8, perEndpoint: 3 }).tick();
      for (let turns = 0; calls.answered < 180 && turns < 1000; turns++) {
        await turn();
        // Holds back the calls to one endpoint for a few turns, so that they pile up to their bound.
        calls.answer(calls.open.filter((call) => call.url !== urls[Math.floor(turns / 4) % 6]));
      }
      await ticking;
      expect(calls.maxOpen).to.equal(8);
      const perEndpoint = urls.map((url) => calls.maxOpenPerEndpoint.get(url)!);
      expect(Math.max(...perEndpoint)).to.equal(3);
      expect(states()).to.deep.equal(urls.map((url) => ({ url, state: 'DELIVERED', n: 30 })));
    });

    it('lets a slow endpoint hold only its own slots while deliveries to the others keep flowing', async () => {
      const acme = account('acme');
      const [slow, fast] = endpoints(acme.id, ['slow', 'fast']);
      for (let n = 0; n < 20; n++) record(acme.id, { n });
      const calls = new OpenCalls();
      const ticking = dispatcher({ deliver: calls.deliver, concurrency: 6, perEndpoint: 4 }).tick();
      for (let turns = 0; calls.answered < 20 && turns < 1000; turns++) {
        await turn();
        expect(calls.openTo(slow!)).to.be.at.most(4);
        calls.answer(calls.open.filter((call) => call.url === fast));
      }
      await turn();
      expect(calls.openTo(slow!)).to.equal(4); // never answered, still open
      timers.advance(RECORD_DELAY_MS); // outcomes are written in batches, shortly after
      // The slow endpoint's deliveries are due still, without a row until their first outcome.
      expect(states()).to.deep.equal([{ url: fast, state: 'DELIVERED', n: 20 }]);
      expect(countsOf(slow!)).to.deep.equal({ pending: 20, delivered: 0, failed: 0 });
      for (let turns = 0; calls.answered < 40 && turns < 1000; turns++) {
        await turn();
        calls.answer(calls.open);
      }
      await ticking;
      expect(states()).to.deep.equal([
        { url: fast, state: 'DELIVERED', n: 20 },
        { url: slow, state: 'DELIVERED', n: 20 },
      ]);
    });

    it('writes a PENDING row for each delivery not attempted within FIRST_ATTEMPT_WINDOW_MS (in hand or not yet read), and still sends every delivery once', async () => {
      const acme = account('acme');
      const [slow, fast] = endpoints(acme.id, ['slow', 'fast']);
      for (let n = 0; n < 40; n++) record(acme.id, { n });
      const calls = new OpenCalls();
      const sentTo: string[] = [];
      const deliver: DeliverWebhook = (endpoint, body, timestampMs) => {
        sentTo.push(`${endpoint.url} ${JSON.parse(body).data.n}`);
        return calls.deliver(endpoint, body, timestampMs);
      };
      // One slot per endpoint: the slow one holds 16 (its claim), one of them open, and has 24 more not yet read.
      const run = dispatcher({ deliver, perEndpoint: 1 });
      run.start();
      timers.advance(0);
      for (let turns = 0; calls.answered < 40 && turns < 1000; turns++) {
        await turn();
        calls.answer(calls.open.filter((call) => call.url === fast));
      }
      await turn();
      expect(calls.openTo(slow!)).to.equal(1);
      timers.advance(RECORD_DELAY_MS);
      expect(states()).to.deep.equal([{ url: fast, state: 'DELIVERED', n: 40 }]);
      timers.advance(FIRST_ATTEMPT_WINDOW_MS); // polls meanwhile: the cursor moves past the 40 events
      expect(states()).to.deep.equal([
        { url: fast, state: 'DELIVERED', n: 40 },
        { url: slow, state: 'PENDING', n: 40 },
      ]);
      expect(countsOf(slow!)).to.deep.equal({ pending: 40, delivered: 0, failed: 0 });
      for (let turns = 0; calls.answered < 80 && turns < 1000; turns++) {
        calls.answer(calls.open);
        await turn();
      }
      await run.stop();
      expect(sentTo).to.have.length(80);
      expect(new Set(sentTo).size).to.equal(80);
      expect(states()).to.deep.equal([
        { url: fast, state: 'DELIVERED', n: 40 },
        { url: slow, state: 'DELIVERED', n: 40 },
      ]);
      expect(deliveryState().every((row) => row.attempts === 1)).to.equal(true);
      expect(core.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get()).to.deep.equal({ n: 80 });
    });

    it('starts on new events when woken, without waiting for the next poll', async () => {
      const acme = account('acme');
      endpoints(acme.id, ['one']);
      const run = dispatcher({ intervalMs: 60_000 });
      run.start();
      timers.advance(0); // the first poll: nothing yet
      record(acme.id, {});
      run.wake();
      timers.advance(0);
      await turn();
      expect(sent).to.have.length(1);
      await run.stop();
      expect(deliveryState()[0]).to.deep.include({ state: 'DELIVERED', attempts: 1 });
    });

    it('on stop, lets the attempts in flight end and leaves the claimed ones not yet attempted due, untouched, to be sent after a restart', async () => {
      const acme = account('acme');
      endpoints(acme.id, ['one']);
      for (let n = 0; n < 5; n++) record(acme.id, { n });
      const calls = new OpenCalls();
      const run = dispatcher({ deliver: calls.deliver, perEndpoint: 1 });
      run.start();
      timers.advance(0);
      expect(calls.open).to.have.length(1);
      const stopping = run.stop();
      calls.answer(calls.open);
      await stopping;
      expect(calls.answered).to.equal(1);
      // The other four are due still: no row until their first outcome.
      expect(deliveryState().map((row) => [row.state, row.next_attempt_at])).to.deep.equal([['DELIVERED', '2026-11-21T10:00:00.000Z']]);
      expect(countsOf('https://one.example.com/hook')).to.deep.equal({ pending: 4, delivered: 1, failed: 0 });
      await dispatcher().tick();
      expect(sent).to.have.length(4);
      expect(deliveryState().every((row) => row.state === 'DELIVERED')).to.equal(true);
    });

    it('after a crash, sends again at once both a delivery whose attempt was cut short and one whose outcome was not yet written; the attempt log holds only what was written', async () => {
      const acme = account('acme');
      endpoints(acme.id, ['one']);
      record(acme.id, { n: 1 });
      record(acme.id, { n: 2 });
      const calls = new OpenCalls();
      void dispatcher({ deliver: calls.deliver }).tick();
      await turn();
      expect(calls.open).to.have.length(2);
      calls.answer(calls.open.slice(0, 1)); // a 2xx whose outcome waits for the next write
      await turn();
      // The process "dies" here: no timer moves, so that write never happens.
      expect(deliveryState()).to.deep.equal([]); // a delivery's row is written with its first outcome
      expect(countsOf('https://one.example.com/hook')).to.deep.equal({ pending: 2, delivered: 0, failed: 0 });
      expect(core.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get()).to.deep.equal({ n: 0 });
      await dispatcher().tick(); // the restart, at the same instant
      expect(sent).to.have.length(2);
      expect(new Set(sent.map((delivery) => JSON.parse(delivery.body).data.n))).to.deep.equal(new Set([1, 2]));
      expect(deliveryState().map((row) => [row.state, row.attempts])).to.deep.equal([
        ['DELIVERED', 1],
        ['DELIVERED', 1],
      ]);
      expect(core.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get()).to.deep.equal({ n: 2 });
    });

    it('keeps outcomes whose write failed, and their deliveries in hand: nothing is sent twice, nothing new is taken until a write succeeds, and then every attempt is recorded', async () => {
      const acme = account('acme');
      endpoints(acme.id, ['one', 'two']);
      for (let n = 0; n < 40; n++) record(acme.id, { n }); // more than one claim's worth: claims come while outcomes wait
      const writes = { failing: true };
      const deliveries = failingWrites(core.db, writes);
      const errors: unknown[] = [];
      const run = dispatcher({ deliveries, onError: (error) => errors.push(error), perEndpoint: 2 });
      await run.tick(); // every delivery sent; the write of their outcomes failed
      expect(errors.map(String)).to.deep.equal(['Error: database or disk is full']);
      expect(sent).to.have.length(80);
      for (let n = 40; n < 50; n++) record(acme.id, { n });
      await run.tick(); // the writes, fan-out included, fail again: the new events are not taken
      expect(errors.length).to.be.greaterThan(1);
      expect(sent).to.have.length(80);
      writes.failing = false;
      await run.tick(); // the write succeeds: what was kept is recorded, the new events go, nothing twice
      expect(sent).to.have.length(100);
      expect(deliveryState().every((row) => row.state === 'DELIVERED' && row.attempts === 1)).to.equal(true);
      const log = core.db.prepare('SELECT event_id, endpoint_id, COUNT(*) AS n FROM webhook_attempts GROUP BY 1, 2').all() as Array<{ n: number }>;
      expect(log).to.have.length(100);
      expect(log.every((row) => row.n === 1)).to.equal(true);
    });

    it('takes nothing more while its writes fail, so that what waits to be written stays within what it may hold', async () => {
      const acme = account('acme');
      endpoints(acme.id, ['one']);
      for (let n = 0; n < 40; n++) record(acme.id, { n });
      const writes = { failing: true };
      const deliveries = failingWrites(core.db, writes);
      const calls = new OpenCalls();
      let holding = true;
      let quick = 0;
      const deliver: DeliverWebhook = (endpoint, body, timestampMs) => {
        if (holding) return calls.deliver(endpoint, body, timestampMs);
        quick += 1;
        return Promise.resolve({ ok: true, status: 204, durationMs: 1 });
      };
      const run = dispatcher({ deliveries, deliver, perEndpoint: 1, onError: () => undefined });
      const ticking = run.tick();
      await turn();
      calls.answer(calls.open);
      await turn();
      timers.advance(RECORD_DELAY_MS); // the outcome's write fails
      for (let turns = 0; calls.open.length > 0 && turns < 1000; turns++) {
        calls.answer(calls.open);
        await turn();
      }
      await ticking;
      expect(calls.answered).to.equal(16); // the first claim's worth (1 slot x 16 ahead), no more
      writes.failing = false;
      holding = false;
      await run.tick(); // the write succeeds, and the rest is taken
      expect(quick).to.equal(24);
      expect(deliveryState().every((row) => row.state === 'DELIVERED' && row.attempts === 1)).to.equal(true);
    });

    it('over many claims, each reading on from where the last stopped, takes every due delivery exactly once, retries included', async () => {
      const acme = account('acme');
      const urls = endpoints(acme.id, ['a', 'b', 'c']);
      for (let n = 0; n < 150; n++) record(acme.id, { n }); // one instant: each queue is ordered by event id
      timers.advance(1);
      for (let n = 150; n < 200; n++) record(acme.id, { n });
      const calls: Array<{ url: string; n: number }> = [];
      let answered = 0;
      const deliver: DeliverWebhook = async (endpoint, body) => {
        const n = JSON.parse(body).data.n as number;
        calls.push({ url: endpoint.url, n });
        await turn();
        // Every seventh event fails at endpoint b on its first attempt.
        const fails = endpoint.url === urls[1] && n % 7 === 0 && calls.filter((call) => call.url === endpoint.url && call.n === n).length === 1;
        answered += 1;
        return fails ? { ok: false, status: 500, durationMs: 1 } : { ok: true, status: 204, durationMs: 1 };
      };
      const run = dispatcher({ deliver, concurrency: 4, perEndpoint: 2 });
      await run.tick();
      expect(answered).to.equal(600);
      timers.advance(10_000);
      await run.tick();
      const retried = Array.from({ length: 200 }, (_, n) => n).filter((n) => n % 7 === 0).length;
      expect(calls).to.have.length(600 + retried);
      const perDelivery = new Map<string, number>();
      for (const call of calls) perDelivery.set(`${call.url} ${call.n}`, (perDelivery.get(`${call.url} ${call.n}`) ?? 0) + 1);
      expect(perDelivery.size).to.equal(600);
      expect([...perDelivery].filter(([key, times]) => times !== (key.startsWith(urls[1]!) && Number(key.split(' ')[1]) % 7 === 0 ? 2 : 1))).to.deep.equal([]);
      expect(states()).to.deep.equal(urls.map((url) => ({ url, state: 'DELIVERED', n: 200 })));
      expect(core.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get()).to.deep.equal({ n: 600 + retried });
    });

    it('over real HTTPS: a receiver that does not answer holds its own connections only, while another gets every event', async () => {
      const certs = tempDir();
      const pems = makeCertificates(certs.path);
      const unanswered: Array<() => void> = [];
      const answerHeld = () => unanswered.splice(0).forEach((respond) => respond());
      const slow = await startReceiver(pems.serverKey, pems.serverCert, (_request, response) => unanswered.push(() => response.writeHead(204).end()));
      const fast = await startReceiver(pems.serverKey, pems.serverCert, (_request, response) => response.writeHead(204).end());
      const agent = createWebhookAgent({ extraCaPem: pems.caCert, allow: parseCidrList('127.0.0.0/8') });
      try {
        const acme = account('acme');
        endpoints(acme.id, [slow.url, fast.url]);
        for (let n = 0; n < 12; n++) record(acme.id, { n });
        const deliver: DeliverWebhook = (endpoint, body, timestampMs) =>
          deliverWebhook({ url: endpoint.url, secret: endpoint.secret, body, timestampMs, agent });
        const ticking = dispatcher({ deliver, concurrency: 6, perEndpoint: 4 }).tick();
        await waitFor(
          async () => fast.requests.length,
          (count) => count === 12,
          'every event at the answering receiver',
        );
        expect(slow.requests).to.have.length(4);
        expect(slow.connections).to.equal(4);
        const answerAndCount = async () => {
          answerHeld();
          return slow.requests.length;
        };
        await waitFor(answerAndCount, (count) => count === 12, 'every event at the slow receiver');
        answerHeld();
        await ticking;
        expect(states()).to.deep.equal([fast.url, slow.url].sort().map((url) => ({ url, state: 'DELIVERED', n: 12 })));
      } finally {
        answerHeld();
        await agent.destroy();
        await Promise.all([slow.close(), fast.close()]);
        certs.remove();
      }
    });
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
      await waitFor(
        async () => receiver.requests.map((request) => JSON.parse(request.body)),
        (events) =>
          events.some((event) => event.type === 'risk.created') && events.some((event) => event.type === 'scan.updated' && event.data.state === 'SUCCEEDED'),
        'the events',
      );
      for (const request of receiver.requests) {
        expect(
          verifyWebhook(endpoint.secret, request.headers['x-service-timestamp'] as string, request.body, request.headers['x-service-signature'] as string),
        ).to.equal(true);
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
