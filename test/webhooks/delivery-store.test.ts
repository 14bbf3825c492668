/**
 * The dispatcher's store on a real SQLite database: how a batch of outcomes
 * is written (a row at a time, in order), for the cases a batch can hold
 * besides the usual one outcome per delivery: the same delivery twice, and a
 * delivery whose endpoint was deleted while it was in flight.
 */
import { expect } from 'chai';
import type { DeliveryAttempt, DueDelivery } from '../../src/app/ports.js';
import { loadSettings } from '../../src/config/settings.js';
import { newEvent } from '../../src/domain/events/event.js';
import { composeCore } from '../../src/main/composition-root.js';
import { SqliteWebhookDeliveryRepository } from '../../src/store/webhook-deliveries-repository.js';
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
  function fannedOut(names: readonly string[]): { accountId: string; deliveries: DueDelivery[] } {
    const accountId = core.accounts.createAccount({ name: 'acme' }).account.id;
    for (const name of names) core.webhookEndpoints.add(accountId, `https://${name}.example.com/hook`);
    core.outbox.append([newEvent(accountId, 'scan.created', { n: 1 }, new Date(at))]);
    store.record([], true); // the dispatcher's pass: the event's deliveries are due, read from the outbox
    const lanes = new Map(store.endpointsWithDue(at).map((endpointId) => [endpointId, { room: 10, inHand: [] }]));
    const deliveries = store.due({ now: at, lanes });
    expect(deliveries).to.have.length(names.length);
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
    deliveries: core.db.prepare('SELECT w.url, d.state, d.attempts, d.next_attempt_at FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id ORDER BY w.url').all(),
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
});
