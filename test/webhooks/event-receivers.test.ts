/**
 * Events are recorded for their receivers (README, Webhooks): an event that
 * no webhook endpoint of its account would receive when it happens is not
 * stored at all, and an endpoint receives the events that happen after it is
 * registered. Real store, real upload path, the real dispatcher with a
 * recording `deliver`; time is a fake clock.
 */
import { expect } from 'chai';
import { presentRisk } from '../../src/app/present/risk.js';
import { WebhookDispatcher } from '../../src/app/webhook-dispatcher.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore } from '../../src/main/composition-root.js';
import { SqliteWebhookDeliveryRepository } from '../../src/store/webhook-deliveries-repository.js';
import { FakeTimers } from '../support/fake-timers.js';
import { nmapReport } from '../support/nmap-report.js';
import { tempDir } from '../support/temp-dir.js';

describe('events are stored only for their receivers', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let timers: FakeTimers;
  let sent: Array<{ endpoint: string; body: string }>;

  beforeEach(() => {
    dir = tempDir();
    timers = new FakeTimers(Date.parse('2026-11-21T10:00:00.000Z'));
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }), { now: () => new Date(timers.now()) });
    sent = [];
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  const account = (name: string) => core.accounts.createAccount({ name }).account;
  const eventTypes = (accountId: string) =>
    (core.db.prepare('SELECT type FROM events WHERE account_id = ? ORDER BY seq').all(accountId) as Array<{ type: string }>).map((row) => row.type);
  const riskCount = (accountId: string) => (core.db.prepare('SELECT COUNT(*) AS n FROM risks WHERE account_id = ?').get(accountId) as { n: number }).n;

  async function importNmap(owner: Account, xml: string) {
    const source = core.sources.create(owner, { source_type: 'IMPORTED', name: `upload ${timers.now()}` });
    const upload = core.imports.newUpload();
    upload.useScanType('NMAP');
    upload.write(Buffer.from(xml));
    return core.imports.importResult(owner, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
  }

  async function deliverAll(): Promise<void> {
    const dispatcher = new WebhookDispatcher({
      deliveries: new SqliteWebhookDeliveryRepository(core.db),
      deliver: async (endpoint, body) => {
        sent.push({ endpoint: endpoint.url, body });
        return { ok: true, status: 204, durationMs: 1 };
      },
      clock: { now: () => new Date(timers.now()) },
      timers,
    });
    for (let tick = 0; tick < 5; tick++) await dispatcher.tick();
  }

  it('records an upload of an account with no endpoint, its risks and targets, and stores no event at all', async () => {
    const acme = account('acme');
    // 30 hosts of 50 ports: more findings than one transaction writes, so the upload goes in chunks.
    const imported = await importNmap(acme, nmapReport(30, 50));
    expect(imported.scan.risks.newOpen).to.have.length(1500);
    expect(riskCount(acme.id)).to.equal(1500);
    expect(eventTypes(acme.id)).to.deep.equal([]);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM events').get()).to.deep.equal({ n: 0 });
  });

  it("stores the events of an account with an endpoint and none of another account's without one", async () => {
    const acme = account('acme');
    const other = account('other');
    core.webhookEndpoints.add(acme.id, 'https://hooks.example.com/acme');
    timers.advance(1000);
    await importNmap(acme, nmapReport(2, 3));
    await importNmap(other, nmapReport(2, 3, 46));
    // An upload's risk events are written by its chunks (held back from delivery), its scan's by its last transaction.
    expect(eventTypes(acme.id)).to.deep.equal([...Array(6).fill('risk.created'), 'scan.created']);
    expect(eventTypes(other.id)).to.deep.equal([]);
    expect(riskCount(other.id)).to.equal(6);
  });

  it('stores nothing for events that happened before the first endpoint; from its registration on, every event, delivered as the API presents the risk', async () => {
    const acme = account('acme');
    await importNmap(acme, nmapReport(1, 2));
    expect(eventTypes(acme.id)).to.deep.equal([]);
    timers.advance(60_000);
    core.webhookEndpoints.add(acme.id, 'https://hooks.example.com/acme');
    timers.advance(60_000);
    const again = await importNmap(acme, nmapReport(1, 1));
    expect(eventTypes(acme.id)).to.deep.equal(['risk.updated', 'risk.updated', 'scan.created']);
    // The wire format is unchanged: each risk event's data is the Risk as GET /v1/risks/{id} presented it then.
    const stillOpen = presentRisk(core.risks.get(acme, again.scan.risks.stillOpen[0]!));
    const closed = presentRisk(core.risks.get(acme, again.scan.risks.closed[0]!));
    await deliverAll();
    const bodies = sent.map((delivery) => JSON.parse(delivery.body) as { type: string; data: { id: string } });
    // Events made in the same millisecond may go out in any order.
    expect(bodies.map((body) => body.type).sort()).to.deep.equal(['risk.updated', 'risk.updated', 'scan.created']);
    expect(bodies.find((body) => body.data.id === stillOpen.id)!.data).to.deep.equal(JSON.parse(JSON.stringify(stillOpen)));
    expect(bodies.find((body) => body.data.id === closed.id)!.data).to.deep.include({ status: 'CLOSED' });
    expect(sent.every((delivery) => delivery.endpoint === 'https://hooks.example.com/acme')).to.equal(true);
  });

  it("stores a dashboard test event for its endpoint, and the account's events again once its last endpoint is removed: none", async () => {
    const acme = account('acme');
    const endpoint = core.webhookEndpoints.add(acme.id, 'https://hooks.example.com/acme');
    core.webhookEndpoints.sendTestEvent(acme.id, endpoint.id);
    expect(eventTypes(acme.id)).to.deep.equal(['webhook.test']);
    core.webhookEndpoints.remove(acme.id, endpoint.id);
    await importNmap(acme, nmapReport(1, 2));
    expect(eventTypes(acme.id)).to.deep.equal(['webhook.test']);
  });
});
