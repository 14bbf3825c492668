/**
 * The dispatcher's store on a real SQLite database: how a batch of outcomes
 * is written (a row at a time, in order), for the cases a batch can hold
 * besides the usual one outcome per delivery: the same delivery twice, and a
 * delivery whose endpoint was deleted while it was in flight. A delivery done
 * at its first attempt has no row, only its attempt (migration 0019): it is
 * not sent again and the delivery log counts it as before.
 */
import { expect } from 'chai';
import type { DeliveryAttempt, DueDelivery } from '../../src/app/ports.js';
import { loadSettings } from '../../src/config/settings.js';
import { newEvent, testEvent } from '../../src/domain/events/event.js';
import { composeCore } from '../../src/main/composition-root.js';
import { SqliteWebhookDeliveryRepository, type DeliveryRepositoryOptions } from '../../src/store/webhook-deliveries-repository.js';
import { SqliteWebhookDeliveryLog } from '../../src/store/webhook-delivery-log.js';
import { tempDir } from '../support/temp-dir.js';

describe('webhook delivery store: recording outcomes', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let store: SqliteWebhookDeliveryRepository;
  const at = '2026-11-21T10:00:00.000Z';

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }), { now: () => new Date(at) });
    store = new SqliteWebhookDeliveryRepository(core.db);
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  /** An account with endpoints `names`, one event fanned out to them, and its deliveries as a claim takes them. */
  function fannedOut(names: readonly string[], events = 1): { accountId: string; deliveries: DueDelivery[] } {
    const accountId = core.accounts.createAccount({ name: 'acme' }).account.id;
    for (const name of names) core.webhookEndpoints.add(accountId, `https://${name}.example.com/hook`);
    core.outbox.append(Array.from({ length: events }, (_, n) => newEvent(accountId, 'scan.created', { n }, new Date(at))));
    store.record([], true); // the dispatcher's pass: the event's deliveries are due, read from the outbox
    const lanes = new Map(store.endpointsWithDue(at).map((endpointId) => [endpointId, { room: 10, inHand: [] }]));
    const deliveries = store.due({ now: at, lanes });
    expect(deliveries).to.have.length(names.length * events);
    return { accountId, deliveries };
  }

  const outcome = (delivery: DueDelivery, fields: Partial<DeliveryAttempt>): DeliveryAttempt => ({
    eventId: delivery.eventId,
    endpointId: delivery.endpoint.id,
    attemptedAt: at,
    status: 204,
    error: null,
    durationMs: 3,
    state: 'DELIVERED',
    nextAttemptAt: at,
    ...fields,
  });

  const rows = () => ({
    deliveries: core.db
      .prepare(
        'SELECT w.url, d.state, d.attempts, d.next_attempt_at FROM webhook_delivery_states d JOIN webhook_endpoints w ON w.id = d.endpoint_id ORDER BY w.url',
      )
      .all(),
    attempts: core.db.prepare('SELECT endpoint_id, status, error, attempted_at FROM webhook_attempts ORDER BY seq').all(),
  });

  it('counts every attempt of a delivery that appears twice in one batch, in order: the log holds both and the state is the last one', () => {
    const { deliveries } = fannedOut(['one']);
    const [delivery] = deliveries as [DueDelivery];
    store.record(
      [
        outcome(delivery, { status: 503, error: 'HTTP 503', state: 'PENDING', nextAttemptAt: '2026-11-21T10:00:10.000Z' }),
        outcome(delivery, { attemptedAt: '2026-11-21T10:00:10.000Z', nextAttemptAt: '2026-11-21T10:00:10.000Z' }),
      ],
      false,
    );
    const { deliveries: states, attempts } = rows();
    expect(states).to.deep.equal([{ url: 'https://one.example.com/hook', state: 'DELIVERED', attempts: 2, next_attempt_at: '2026-11-21T10:00:10.000Z' }]);
    expect(attempts).to.deep.equal([
      { endpoint_id: delivery.endpoint.id, status: 503, error: 'HTTP 503', attempted_at: at },
      { endpoint_id: delivery.endpoint.id, status: 204, error: null, attempted_at: '2026-11-21T10:00:10.000Z' },
    ]);
  });

  it('writes nothing for a delivery whose endpoint was deleted while it was in flight, and the rest of the batch as usual', () => {
    const { accountId, deliveries } = fannedOut(['gone', 'kept']);
    const gone = deliveries.find((delivery) => delivery.endpoint.url.includes('gone'))!;
    const kept = deliveries.find((delivery) => delivery.endpoint.url.includes('kept'))!;
    core.webhookEndpoints.remove(accountId, gone.endpoint.id);
    store.record([outcome(gone, {}), outcome(kept, {})], false);
    const { deliveries: states, attempts } = rows();
    expect(states).to.deep.equal([{ url: 'https://kept.example.com/hook', state: 'DELIVERED', attempts: 1, next_attempt_at: at }]);
    expect(attempts).to.deep.equal([{ endpoint_id: kept.endpoint.id, status: 204, error: null, attempted_at: at }]);
  });

  it('writes no delivery row for a delivery done at its first attempt, only its attempt, and never takes it again: not after a restart, not when the cursor passes its event', () => {
    const { deliveries } = fannedOut(['done', 'retried']);
    const done = deliveries.find((delivery) => delivery.endpoint.url.includes('done'))!;
    const retried = deliveries.find((delivery) => delivery.endpoint.url.includes('retried'))!;
    const retryAt = '2026-11-21T10:00:10.000Z';
    store.record([outcome(done, {}), outcome(retried, { status: 503, error: 'HTTP 503', state: 'PENDING', nextAttemptAt: retryAt })], false);
    const urlOf = 'SELECT w.url FROM webhook_endpoints w WHERE w.id = endpoint_id';
    expect(core.db.prepare(`SELECT (${urlOf}) AS url, state, attempts FROM webhook_deliveries`).all()).to.deep.equal([
      { url: 'https://retried.example.com/hook', state: 'PENDING', attempts: 1 },
    ]);
    expect(core.db.prepare(`SELECT (${urlOf}) AS url, status, first_delivered FROM webhook_attempts ORDER BY seq`).all()).to.deep.equal([
      { url: 'https://done.example.com/hook', status: 204, first_delivered: 1 },
      { url: 'https://retried.example.com/hook', status: 503, first_delivered: null },
    ]);

    // A restart within the window: the event is past the cursor, read from the outbox again; only the retry is left, and it is not due yet.
    const restarted = new SqliteWebhookDeliveryRepository(core.db);
    restarted.record([], true);
    const claim = (repository: SqliteWebhookDeliveryRepository, now: string) =>
      repository
        .due({ now, lanes: new Map(repository.endpointsWithDue(now).map((endpointId) => [endpointId, { room: 10, inHand: [] }])) })
        .map((delivery) => delivery.endpoint.url);
    expect(claim(restarted, at)).to.deep.equal([]);
    expect(claim(restarted, retryAt)).to.deep.equal(['https://retried.example.com/hook']);

    // The window passed: the cursor moves past the event and writes a PENDING row only for what has neither a row nor a first-attempt delivery: nothing here.
    const later = new SqliteWebhookDeliveryRepository(core.db, { firstAttemptWindowMs: 0, clock: { now: () => new Date(retryAt) } });
    expect(later.record([], true)).to.equal(0);
    expect(core.db.prepare('SELECT event_seq FROM webhook_cursor').get()).to.deep.equal({
      event_seq: (core.db.prepare('SELECT MAX(seq) AS seq FROM events').get() as { seq: number }).seq,
    });
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries').get()).to.deep.equal({ n: 1 });
    expect(claim(later, retryAt)).to.deep.equal(['https://retried.example.com/hook']);

    // An outcome that still comes for it (a stale duplicate) changes nothing: it stays delivered, once.
    later.record([outcome(done, { status: 503, error: 'HTTP 503', state: 'PENDING', nextAttemptAt: retryAt })], false);
    expect(core.db.prepare(`SELECT state, attempts FROM webhook_delivery_states WHERE endpoint_id = ?`).all(done.endpoint.id)).to.deep.equal([
      { state: 'DELIVERED', attempts: 1 },
    ]);
  });

  it("keeps the delivery log's counts what one row per delivery gave: first-attempt deliveries, a retry that then succeeded, a retry pending, a failure and a delivery not yet attempted", () => {
    const { deliveries } = fannedOut(['mixed', 'clean'], 5);
    const mixed = deliveries.filter((delivery) => delivery.endpoint.url.includes('mixed'));
    const clean = deliveries.filter((delivery) => delivery.endpoint.url.includes('clean'));
    const [first1, first2, retriedThenDone, pendingRetry, failed] = mixed as [DueDelivery, DueDelivery, DueDelivery, DueDelivery, DueDelivery];
    const retryAt = '2026-11-21T10:00:10.000Z';
    const failure = { status: 503, error: 'HTTP 503', state: 'PENDING' as const, nextAttemptAt: retryAt };
    // `failed` is left with neither: first outcomes for the others, then the retry that succeeds, and the failure.
    store.record(
      [
        outcome(first1, {}),
        outcome(first2, {}),
        outcome(retriedThenDone, failure),
        outcome(pendingRetry, failure),
        ...clean.slice(0, 4).map((delivery) => outcome(delivery, {})),
      ],
      false,
    );
    store.record([outcome(retriedThenDone, { attemptedAt: retryAt, nextAttemptAt: retryAt })], false);
    const log = new SqliteWebhookDeliveryLog(core.db);
    const mixedId = first1.endpoint.id;
    const cleanId = clean[0]!.endpoint.id;
    // Not attempted yet (fresh, past the cursor): pending. The fifth clean delivery too.
    expect(log.countsFor(mixedId)).to.deep.equal({ pending: 2, delivered: 3, failed: 0 });
    expect(log.countsFor(cleanId)).to.deep.equal({ pending: 1, delivered: 4, failed: 0 });
    store.record([outcome(failed, { status: 500, error: 'HTTP 500', state: 'FAILED' }), outcome(clean[4]!, {})], false);
    expect(log.countsFor(mixedId)).to.deep.equal({ pending: 1, delivered: 3, failed: 1 });
    expect(log.countsFor(cleanId)).to.deep.equal({ pending: 0, delivered: 5, failed: 0 });

    // The same as the counts before migration 0019 (one row per delivery), computed over the view that gives each delivery its row as before.
    const before = core.db.prepare(`SELECT
        (SELECT COUNT(*) FROM webhook_delivery_states WHERE endpoint_id = @id AND state = 'PENDING') AS pending,
        (SELECT COUNT(*) FROM webhook_delivery_states WHERE endpoint_id = @id AND state = 'DELIVERED') AS delivered,
        (SELECT COUNT(*) FROM webhook_delivery_states WHERE endpoint_id = @id AND state = 'FAILED') AS failed`);
    for (const id of [mixedId, cleanId]) expect(log.countsFor(id)).to.deep.equal(before.get({ id }));
    // The log lists every attempt, those of first-attempt deliveries included, newest first.
    expect(log.attemptsFor(mixedId, 10).map((attempt) => attempt.status)).to.deep.equal([500, 204, 503, 503, 204, 204]);
    expect(log.attemptsFor(cleanId, 10).map((attempt) => attempt.status)).to.deep.equal([204, 204, 204, 204, 204]);
  });

  it('writes a first delivery without checks only while no row can have appeared for it: after the cursor wrote PENDING rows, and for the same delivery twice in a batch, the checks decide', () => {
    let nowMs = Date.parse(at);
    store = new SqliteWebhookDeliveryRepository(core.db, { clock: { now: () => new Date(nowMs) } });
    const { deliveries } = fannedOut(['quick', 'late', 'twice'], 1);
    const [quick, late, twice] = ['quick', 'late', 'twice'].map((name) => deliveries.find((delivery) => delivery.endpoint.url.includes(name))!) as [
      DueDelivery,
      DueDelivery,
      DueDelivery,
    ];
    expect(deliveries.map((delivery) => delivery.rowless)).to.deep.equal([0, 0, 0]);
    const delivered = (delivery: DueDelivery) => outcome(delivery, { rowless: delivery.rowless });
    store.record([delivered(quick), delivered(twice), delivered(twice)], false);
    // The window passes with `late` still in flight: the cursor writes its PENDING row.
    nowMs += 11_000;
    expect(store.record([], true)).to.equal(1);
    store.record([delivered(late)], false);
    expect(
      core.db
        .prepare('SELECT (SELECT url FROM webhook_endpoints w WHERE w.id = endpoint_id) AS url, state, attempts FROM webhook_delivery_states ORDER BY 1')
        .all(),
    ).to.deep.equal([
      { url: 'https://late.example.com/hook', state: 'DELIVERED', attempts: 1 },
      { url: 'https://quick.example.com/hook', state: 'DELIVERED', attempts: 1 },
      { url: 'https://twice.example.com/hook', state: 'DELIVERED', attempts: 1 },
    ]);
    expect(
      core.db.prepare('SELECT (SELECT url FROM webhook_endpoints w WHERE w.id = endpoint_id) AS url, first_delivered FROM webhook_attempts ORDER BY seq').all(),
    ).to.deep.equal([
      { url: 'https://quick.example.com/hook', first_delivered: 1 },
      { url: 'https://twice.example.com/hook', first_delivered: 1 },
      { url: 'https://late.example.com/hook', first_delivered: null },
    ]);
    const log = new SqliteWebhookDeliveryLog(core.db);
    for (const delivery of [quick, late, twice]) expect(log.countsFor(delivery.endpoint.id)).to.deep.equal({ pending: 0, delivered: 1, failed: 0 });
  });

  it('writes nothing for a first delivery whose endpoint was deleted while it was in flight, on the unchecked path too', () => {
    const { accountId, deliveries } = fannedOut(['gone', 'kept']);
    const gone = deliveries.find((delivery) => delivery.endpoint.url.includes('gone'))!;
    const kept = deliveries.find((delivery) => delivery.endpoint.url.includes('kept'))!;
    core.webhookEndpoints.remove(accountId, gone.endpoint.id);
    store.record([outcome(gone, { rowless: gone.rowless }), outcome(kept, { rowless: kept.rowless })], false);
    expect(rows()).to.deep.equal({
      deliveries: [{ url: 'https://kept.example.com/hook', state: 'DELIVERED', attempts: 1, next_attempt_at: at }],
      attempts: [{ endpoint_id: kept.endpoint.id, status: 204, error: null, attempted_at: at }],
    });
  });

  it('finds the same new deliveries from the events it holds in memory as from the outbox: test events, an endpoint added later, two accounts, claims smaller than the queue, and more events at once than it holds', () => {
    const later = (ms: number) => new Date(Date.parse(at) + ms);
    const acme = core.accounts.createAccount({ name: 'acme' }).account.id;
    const other = core.accounts.createAccount({ name: 'other' }).account.id;
    const a1 = core.webhookEndpoints.add(acme, 'https://a1.example.com/hook');
    const a2 = core.webhookEndpoints.add(acme, 'https://a2.example.com/hook');
    core.webhookEndpoints.add(other, 'https://b1.example.com/hook');
    // Made before the events, so they are held in memory: one as the dispatcher runs, one that holds 5 events at most (the second batch is read from
    // the outbox, the third held again).
    const inMemory = new SqliteWebhookDeliveryRepository(core.db);
    const small = new SqliteWebhookDeliveryRepository(core.db, { recentEvents: 5 } satisfies DeliveryRepositoryOptions);
    const record = (events: Parameters<typeof core.outbox.append>[0]) => {
      core.db.transaction(() => core.outbox.append(events))();
      for (const repository of [inMemory, small]) repository.record([], true);
    };
    const event = (accountId: string, n: string, ms = 0) => newEvent(accountId, 'scan.created', { n }, later(ms));
    record([event(acme, 'e1'), event(other, 'x1'), event(acme, 'e2'), event(acme, 'e3'), event(other, 'x2')]);
    record([event(acme, 'e4'), event(acme, 'e5'), event(other, 'x3'), { ...testEvent(acme, a2.id, later(0)), data: { n: 't' } }]);
    // An endpoint added later receives only the events from then on.
    core.db
      .prepare('INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at) VALUES (?, ?, ?, ?, ?)')
      .run('a3-endpoint', acme, 'https://a3.example.com/hook', 'whsec_a3', later(1000).toISOString());
    record([event(acme, 'e6', 2000), event(acme, 'e7', 2000)]);

    /** Claims of 2 per endpoint until nothing is left (outcomes not written: the stores share the database), by endpoint url, in the order taken. */
    const drain = (repository: SqliteWebhookDeliveryRepository) => {
      repository.record([], true);
      const now = later(5000).toISOString();
      const taken: Record<string, string[]> = {};
      for (let round = 0; round < 20; round++) {
        const deliveries = repository.due({ now, lanes: new Map(repository.endpointsWithDue(now).map((endpointId) => [endpointId, { room: 2, inHand: [] }])) });
        if (deliveries.length === 0) break;
        for (const delivery of deliveries)
          (taken[delivery.endpoint.url.slice(8, 10)] ??= []).push((JSON.parse(delivery.body) as { data: { n: string } }).data.n);
      }
      return taken;
    };
    const expected = {
      a1: ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7'],
      a2: ['e1', 'e2', 'e3', 'e4', 'e5', 't', 'e6', 'e7'],
      a3: ['e6', 'e7'],
      b1: ['x1', 'x2', 'x3'],
    };
    expect(drain(inMemory)).to.deep.equal(expected);
    expect(drain(small)).to.deep.equal(expected);
    // Made after them (a restart): read from the outbox, with its checks.
    expect(drain(new SqliteWebhookDeliveryRepository(core.db))).to.deep.equal(expected);
    expect(a1.id).to.not.equal(a2.id);
  });

  it('reads the PENDING rows of an endpoint that endpointsWithDue did not list when a write came between (a retry now due)', () => {
    const { deliveries } = fannedOut(['one', 'two']);
    const [one] = deliveries as [DueDelivery];
    // Nothing PENDING yet: endpointsWithDue finds only fresh deliveries (none left: all taken above).
    expect(store.endpointsWithDue(at)).to.deep.equal([]);
    store.record([outcome(one, { status: 503, error: 'HTTP 503', state: 'PENDING', nextAttemptAt: at })], false);
    const lanes = new Map([[one.endpoint.id, { room: 10, inHand: [] }]]);
    expect(store.due({ now: at, lanes }).map((delivery) => [delivery.eventId, delivery.attempts])).to.deep.equal([[one.eventId, 1]]);
    // And with endpointsWithDue at the same time, as the dispatcher claims: listed, and read.
    expect(store.endpointsWithDue(at)).to.deep.equal([one.endpoint.id]);
    expect(store.due({ now: at, lanes }).map((delivery) => delivery.eventId)).to.deep.equal([one.eventId]);
  });
});
