/**
 * /v1/scans and /v1/results over HTTP against the real service, controller
 * included. Targets are names that fail DNS (their scans end FAILED with every
 * target skipped, without contacting anything), accounts at their monthly
 * limit (OVER_LIMIT never runs), or loopback listeners where a real scan is
 * needed (VIGIL_ALLOW_TARGETS=127.0.0.0/8).
 */
import { expect } from 'chai';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Target } from '../../src/domain/targets/target.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { aTarget } from '../support/targets.js';
import { TestService, type TestResponse } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';
import { tempDir } from '../support/temp-dir.js';
import { receiveEvents } from '../support/event-receiver.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };
const TERMINAL = ['SUCCEEDED', 'STOPPED', 'FAILED', 'OVER_LIMIT'];
const SCAN_TYPES = ['NESSUS', 'NMAP', 'NMAP_UDP', 'NUCLEI', 'OPENVAS', 'OWASP_ZAP', 'OWASP_ZAP_ACTIVE', 'SSLYZE'];

/** A well-formed FQDN that fails DNS: accepted as a target, skipped by the controller. */
const nowhere = (n: number | string) => `host-${n}.invalid-tld-for-tests.example`;
const nowhereUrl = (n: number | string) => `https://${nowhere(n)}/`;
const range = (count: number) => Array.from({ length: count }, (_, i) => i);

interface ScanJson {
  id: string;
  type: string;
  state: string;
  progress: number;
  is_authenticated: boolean;
  requested_targets: Array<{ target_id: string; target: string }>;
  results: Array<{ result_id: string; content_type: string }>;
  conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  scheduled_by: string | null;
  started_at: string | null;
}

let service: TestService;

function expectError(response: TestResponse, status: number, message?: RegExp): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error).to.be.a('string').that.is.not.empty;
  if (message !== undefined) expect(response.body.error).to.match(message);
  expect(response.body.ref).to.be.a('string').that.is.not.empty;
}

async function startScan(body: Record<string, unknown>, key?: string): Promise<ScanJson> {
  const response = await service.post('/v1/scans', body, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function getScan(id: string, key?: string): Promise<ScanJson> {
  const response = await service.get(`/v1/scans/${id}`, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

/** Every scan of the account, following next_page_token, newest first. */
async function listScans(query: Record<string, string | number> = {}, key?: string): Promise<ScanJson[]> {
  const scans: ScanJson[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const response = await service.get('/v1/scans', { key, query: { ...query, page_token: token } });
    expect(response.status, response.text).to.equal(200);
    scans.push(...response.body.data);
    token = response.body.next_page_token;
    pages++;
  } while (token !== undefined && pages < 100);
  return scans;
}

async function listTargets(key?: string): Promise<Array<{ id: string; target: string }>> {
  const response = await service.get('/v1/targets', { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function createTarget(body: Record<string, unknown>, key?: string): Promise<{ id: string; target: string }> {
  const response = await service.post('/v1/targets', body, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

const waitForTerminal = (id: string, key?: string) =>
  waitFor(
    () => getScan(id, key),
    (scan) => TERMINAL.includes(scan.state),
    `scan ${id} to reach a terminal state`,
  );

/** The scan events stored for a scan, in order: type and the state in the payload. */
function eventsOf(scanId: string): Array<{ type: string; state: string }> {
  return service.vigil.db
    .prepare("SELECT type, json_extract(payload, '$.state') AS state FROM events WHERE json_extract(payload, '$.id') = ? ORDER BY seq")
    .all(scanId) as Array<{ type: string; state: string }>;
}

function accountOf(key: string): Account {
  return service.vigil.accounts.authenticate(key).account;
}

/** Inserts a target straight into the store, for fields the API cannot set yet (a login recording). */
function seedTarget(accountId: string, address: string, overrides: Partial<Target> = {}): Target {
  const target = aTarget(accountId, address, overrides);
  new SqliteTargetRepository(service.vigil.db).insert(target);
  return target;
}

describe('HTTP /v1/scans', function () {
  this.timeout(60_000);

  beforeEach(async () => {
    service = await TestService.start();
  });
  afterEach(async () => {
    await service.stop();
  });

  describe('start: choosing targets', () => {
    it('refuses a request with none of targets, target_ids or tags with 400 naming them', async () => {
      const response = await service.post('/v1/scans', { type: 'NMAP' });
      expectError(response, 400, /targets, target_ids or tags/);
    });

    const pairs: Array<[string, Record<string, unknown>, RegExp]> = [
      ['targets and tags', { targets: [nowhere(1)], tags: ['prod'] }, /targets and tags/],
      ['targets and target_ids', { targets: [nowhere(1)], target_ids: [randomUUID()] }, /targets and target_ids/],
      ['target_ids and tags', { target_ids: [randomUUID()], tags: ['prod'] }, /target_ids and tags/],
    ];
    for (const [what, selectors, message] of pairs) {
      it(`refuses a request with both ${what} with 400 naming both`, async () => {
        const response = await service.post('/v1/scans', { type: 'NMAP', ...selectors });
        expectError(response, 400, /exactly one of targets, target_ids or tags/);
        expect(response.body.error).to.match(message);
        expect(await listScans()).to.deep.equal([]);
      });
    }

    for (const field of ['targets', 'target_ids', 'tags']) {
      it(`refuses an empty ${field} array with 400 naming ${field}`, async () => {
        const response = await service.post('/v1/scans', { type: 'NMAP', [field]: [] });
        expectError(response, 400, new RegExp(`^${field}\\b`));
      });

      it(`refuses ${field} with 101 items with 400 naming ${field}`, async () => {
        const response = await service.post('/v1/scans', { type: 'NMAP', [field]: range(101).map((i) => nowhere(i)) });
        expectError(response, 400, new RegExp(`^${field}\\b.*100`));
        expect(await listTargets()).to.deep.equal([]);
      });
    }

    it('refuses a targets item over 2048 characters with 400 naming the item', async () => {
      const response = await service.post('/v1/scans', { type: 'NMAP', targets: [nowhere(1), `https://${nowhere(2)}/${'a'.repeat(2048)}`] });
      expectError(response, 400, /targets.*2048/);
      expect(await listTargets()).to.deep.equal([]);
    });

    it('refuses an unknown type with 400 listing the allowed values', async () => {
      const response = await service.post('/v1/scans', { type: 'NIKTO', targets: [nowhere(1)] });
      expectError(response, 400, /type/);
      for (const type of SCAN_TYPES) expect(response.body.error).to.include(type);
    });

    it('refuses a request without type with 400 naming type', async () => {
      expectError(await service.post('/v1/scans', { targets: [nowhere(1)] }), 400, /type is required/);
    });

    it('refuses a request without an API key with 401', async () => {
      expectError(await service.post('/v1/scans', { type: 'NMAP', targets: [nowhere(1)] }, { key: null }), 401);
    });
  });

  describe('start: targets (validated as for Targets)', () => {
    const refused: Array<[string, string[], number, RegExp]> = [
      ['a private address', [nowhere(1), '10.1.2.3'], 1, /10\.0\.0\.0\/8/],
      ['loopback (not allowed here)', ['127.0.0.1'], 0, /127\.0\.0\.0\/8/],
      ['an IPv6 address', [nowhere(1), nowhere(2), '2001:db8::1'], 2, /IPv6/],
      ['a CIDR range', ['8.8.8.0/24', nowhere(1)], 0, /CIDR/],
      ['a URL whose host is private', [nowhere(1), 'http://192.168.1.1/admin'], 1, /192\.168\.0\.0\/16/],
    ];
    for (const [what, targets, index, reason] of refused) {
      it(`refuses ${what} with 400 naming targets[${index}]`, async () => {
        const response = await service.post('/v1/scans', { type: 'NMAP', targets });
        expectError(response, 400, new RegExp(`targets\\[${index}\\]`));
        expect(response.body.error).to.match(reason);
      });
    }

    it('creates no targets and no scan when one item among good ones is refused', async () => {
      const existing = await createTarget({ target: nowhere('existing') });
      const before = await listTargets();
      const response = await service.post('/v1/scans', { type: 'NMAP', targets: [nowhere(1), nowhere('existing'), nowhere(2), '10.0.0.1', nowhere(3)] });
      expectError(response, 400, /targets\[3\]/);
      expect(await listTargets()).to.deep.equal(before);
      expect(before.map((target) => target.id)).to.deep.equal([existing.id]);
      expect(await listScans()).to.deep.equal([]);
    });

    it('creates new addresses as Targets and reuses existing ones with the same target_id', async () => {
      const existing = await createTarget({ target: nowhere('existing'), label: 'kept', tags: ['old'] });
      const scan = await startScan({ type: 'NMAP', targets: [nowhere('new'), nowhere('EXISTING')] });
      const targets = await listTargets();
      expect(targets).to.have.length(2);
      const created = targets.find((target) => target.target === nowhere('new'));
      expect(created, 'the new address is a Target').not.to.equal(undefined);
      expect(scan.requested_targets).to.deep.equal([
        { target_id: created!.id, target: nowhere('new') },
        { target_id: existing.id, target: nowhere('existing') },
      ]);
      const reused = (await service.get(`/v1/targets/${existing.id}`)).body.data;
      expect(reused).to.include({ label: 'kept' });
      expect(reused.tags).to.deep.equal(['old']);
    });

    it('requests an address listed twice only once', async () => {
      const scan = await startScan({ type: 'NMAP', targets: [nowhere(1), nowhere(1).toUpperCase(), nowhere(2)] });
      expect(scan.requested_targets.map((target) => target.target)).to.deep.equal([nowhere(1), nowhere(2)]);
      expect(await listTargets()).to.have.length(2);
    });
  });

  describe('start: target_ids', () => {
    it("ignores other accounts' target ids and requests only the account's own targets", async () => {
      const other = service.createAccount('other');
      const mine = await createTarget({ target: nowhere('mine') });
      const theirs = await createTarget({ target: nowhere('theirs') }, other.apiKey);
      const scan = await startScan({ type: 'NMAP', target_ids: [theirs.id, mine.id, randomUUID()] });
      expect(scan.requested_targets).to.deep.equal([{ target_id: mine.id, target: nowhere('mine') }]);
      expect(await listScans({}, other.apiKey)).to.deep.equal([]);
    });

    it('refuses only foreign or unknown target ids with 400', async () => {
      const other = service.createAccount('other');
      const theirs = await createTarget({ target: nowhere('theirs') }, other.apiKey);
      const response = await service.post('/v1/scans', { type: 'NMAP', target_ids: [theirs.id, randomUUID()] });
      expectError(response, 400, /target_ids/);
      expect(await listScans()).to.deep.equal([]);
      expect(await listScans({}, other.apiKey)).to.deep.equal([]);
    });
  });

  describe('start: tags', () => {
    it('selects every target having any of the tags, in any letter case', async () => {
      const a = await createTarget({ target: nowhere('a'), tags: ['Prod'] });
      const b = await createTarget({ target: nowhere('b'), tags: ['eu', 'web'] });
      await createTarget({ target: nowhere('c'), tags: ['staging'] });
      const d = await createTarget({ target: nowhere('d'), tags: ['prod', 'eu'] });
      const scan = await startScan({ type: 'NMAP', tags: ['PROD', 'Eu'] });
      expect(scan.requested_targets.map((target) => target.target_id).sort()).to.deep.equal([a.id, b.id, d.id].sort());
    });

    it("never selects another account's targets by tag", async () => {
      const other = service.createAccount('other');
      await createTarget({ target: nowhere('theirs'), tags: ['prod'] }, other.apiKey);
      const mine = await createTarget({ target: nowhere('mine'), tags: ['prod'] });
      const scan = await startScan({ type: 'NMAP', tags: ['prod'] });
      expect(scan.requested_targets).to.deep.equal([{ target_id: mine.id, target: nowhere('mine') }]);
    });

    it('refuses tags that select no target with 400', async () => {
      await createTarget({ target: nowhere('a'), tags: ['prod'] });
      const response = await service.post('/v1/scans', { type: 'NMAP', tags: ['nothing-has-this'] });
      expectError(response, 400, /nothing-has-this/);
      expect(await listScans()).to.deep.equal([]);
    });
  });

  describe('start: splitting by the per-scan target limit', () => {
    /** The account's scans oldest first (creation order), with the response checked to be the first. */
    async function splitInto(body: Record<string, unknown>): Promise<{ first: ScanJson; scans: ScanJson[] }> {
      const first = await startScan(body);
      const scans = (await listScans()).reverse();
      expect(scans[0]!.id, 'the response is the first scan created').to.equal(first.id);
      return { first, scans };
    }

    it('creates one OWASP_ZAP scan per URL and answers with the first; the list shows all', async () => {
      const urls = [nowhereUrl(1), nowhereUrl(2), nowhereUrl(3)];
      const { first, scans } = await splitInto({ type: 'OWASP_ZAP', targets: urls });
      expect(first.requested_targets.map((target) => target.target)).to.deep.equal([urls[0]]);
      expect(scans).to.have.length(3);
      expect(new Set(scans.map((scan) => scan.id)).size).to.equal(3);
      expect(scans.map((scan) => scan.requested_targets.map((target) => target.target))).to.deep.equal(urls.map((url) => [url]));
      expect(scans.every((scan) => scan.type === 'OWASP_ZAP')).to.equal(true);
    });

    for (const type of ['SSLYZE', 'NUCLEI']) {
      it(`splits 25 ${type} targets into scans of 10, 10 and 5, keeping their order`, async () => {
        const targets = range(25).map((i) => nowhere(i));
        const { first, scans } = await splitInto({ type, targets });
        expect(first.requested_targets).to.have.length(10);
        expect(scans.map((scan) => scan.requested_targets.length)).to.deep.equal([10, 10, 5]);
        expect(scans.flatMap((scan) => scan.requested_targets.map((target) => target.target))).to.deep.equal(targets);
        expect(scans.every((scan) => scan.type === type)).to.equal(true);
      });
    }

    it('keeps 10 SSLYZE targets in one scan', async () => {
      const { scans } = await splitInto({ type: 'SSLYZE', targets: range(10).map((i) => nowhere(i)) });
      expect(scans.map((scan) => scan.requested_targets.length)).to.deep.equal([10]);
    });

    it('keeps 100 NMAP targets in one scan', async () => {
      const { scans } = await splitInto({ type: 'NMAP', targets: range(100).map((i) => nowhere(i)) });
      expect(scans.map((scan) => scan.requested_targets.length)).to.deep.equal([100]);
    });

    it('splits 150 NMAP targets selected by tag into scans of 100 and 50', async () => {
      service.vigil.db.transaction(() => {
        for (const i of range(150)) seedTarget(service.accountId, nowhere(i), { tags: ['bulk'] });
      })();
      const { scans } = await splitInto({ type: 'NMAP', tags: ['bulk'] });
      expect(scans.map((scan) => scan.requested_targets.length)).to.deep.equal([100, 50]);
      expect(new Set(scans.flatMap((scan) => scan.requested_targets.map((target) => target.target_id))).size).to.equal(150);
    });
  });

  describe('start: scan types the account may run, and authentication', () => {
    it('refuses NESSUS without the account option with 400', async () => {
      const response = await service.post('/v1/scans', { type: 'NESSUS', targets: [nowhere(1)] });
      expectError(response, 400, /NESSUS/);
      expect(await listScans()).to.deep.equal([]);
    });

    it('starts NESSUS when the account has the option', async () => {
      const nessus = service.createAccount('nessus', { features: ['nessus'] });
      const scan = await startScan({ type: 'NESSUS', targets: [nowhere(1)] }, nessus.apiKey);
      expect(scan).to.include({ type: 'NESSUS', state: 'QUEUED' });
    });

    it('refuses OWASP_ZAP_ACTIVE on the free plan with 400', async () => {
      const response = await service.post('/v1/scans', { type: 'OWASP_ZAP_ACTIVE', targets: [nowhereUrl(1)] });
      expectError(response, 400, /OWASP_ZAP_ACTIVE.*paid/);
      expect(await listScans()).to.deep.equal([]);
    });

    it('starts OWASP_ZAP_ACTIVE on a paid plan', async () => {
      const paid = service.createAccount('paid', { plan: 'paid' });
      const scan = await startScan({ type: 'OWASP_ZAP_ACTIVE', targets: [nowhereUrl(1)] }, paid.apiKey);
      expect(scan).to.include({ type: 'OWASP_ZAP_ACTIVE', state: 'QUEUED' });
    });

    for (const type of ['NMAP', 'SSLYZE', 'NUCLEI']) {
      it(`refuses use_authentication: true on ${type} with 400`, async () => {
        const response = await service.post('/v1/scans', { type, targets: [nowhere(1)], use_authentication: true });
        expectError(response, 400, /use_authentication/);
        expect(await listTargets()).to.deep.equal([]);
      });
    }

    it('accepts use_authentication: false on NMAP', async () => {
      const scan = await startScan({ type: 'NMAP', targets: [nowhere(1)], use_authentication: false });
      expect(scan.is_authenticated).to.equal(false);
    });

    it('accepts use_authentication: true on OWASP_ZAP; is_authenticated is false when no target has a login recording', async () => {
      const scan = await startScan({ type: 'OWASP_ZAP', targets: [nowhereUrl(1)], use_authentication: true });
      expect(scan).to.include({ type: 'OWASP_ZAP', is_authenticated: false });
    });

    it('sets is_authenticated for OWASP_ZAP by default when the target has a login recording, and not with use_authentication: false', async () => {
      const recorded = seedTarget(service.accountId, nowhereUrl('login'), { authSeleniumFile: 'login.side' });
      expect((await startScan({ type: 'OWASP_ZAP', target_ids: [recorded.id] })).is_authenticated).to.equal(true);
      expect((await startScan({ type: 'OWASP_ZAP', target_ids: [recorded.id], use_authentication: true })).is_authenticated).to.equal(true);
      expect((await startScan({ type: 'OWASP_ZAP', target_ids: [recorded.id], use_authentication: false })).is_authenticated).to.equal(false);
      expect((await startScan({ type: 'NMAP', target_ids: [recorded.id] })).is_authenticated).to.equal(false);
    });
  });

  describe('start: the monthly scan limit', () => {
    it('answers the scan over the limit with 200 in OVER_LIMIT, with a condition saying why, and never runs it', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 2 });
      receiveEvents(service.vigil.webhookEndpoints, capped.account.id);
      const first = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      const second = await startScan({ type: 'NMAP', targets: [nowhere(2)] }, capped.apiKey);
      expect([first.state, second.state]).to.deep.equal(['QUEUED', 'QUEUED']);

      const response = await service.post('/v1/scans', { type: 'NMAP', targets: [nowhere(3)] }, { key: capped.apiKey });
      expect(response.status, response.text).to.equal(200);
      const over: ScanJson = response.body.data;
      expect(over.state).to.equal('OVER_LIMIT');
      expect(over.conditions).to.have.length(1);
      expect(over.conditions[0]).to.include({ type: 'Admitted', status: 'False', reason: 'MonthlyScanLimitReached' });
      expect(over.conditions[0]!.message).to.match(/monthly limit of 2/);

      // The two admitted scans run to their end (every target fails DNS); the third is never picked up.
      await waitForTerminal(first.id, capped.apiKey);
      await waitForTerminal(second.id, capped.apiKey);
      const later = await getScan(over.id, capped.apiKey);
      expect(later).to.include({ state: 'OVER_LIMIT', progress: 0, started_at: null });
      expect(later.conditions).to.deep.equal(over.conditions);
      expect(eventsOf(over.id)).to.deep.equal([{ type: 'scan.created', state: 'OVER_LIMIT' }]);
      expect(eventsOf(first.id)[0]).to.deep.equal({ type: 'scan.created', state: 'QUEUED' });
    });

    it('does not count OVER_LIMIT scans: a further request is still over the limit, not admitted', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 1 });
      expect((await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey)).state).to.equal('QUEUED');
      expect((await startScan({ type: 'NMAP', targets: [nowhere(2)] }, capped.apiKey)).state).to.equal('OVER_LIMIT');
      expect((await startScan({ type: 'NMAP', targets: [nowhere(3)] }, capped.apiKey)).state).to.equal('OVER_LIMIT');
    });

    it('does not hand a slot back when a counted scan is deleted', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 1 });
      const counted = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      await waitForTerminal(counted.id, capped.apiKey);
      expect((await service.delete(`/v1/scans/${counted.id}`, { key: capped.apiKey })).status).to.equal(200);
      expect((await startScan({ type: 'NMAP', targets: [nowhere(2)] }, capped.apiKey)).state).to.equal('OVER_LIMIT');
    });

    it('gives a split request that straddles the limit QUEUED first scans and OVER_LIMIT for the rest, each with a scan.created event', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 2 });
      receiveEvents(service.vigil.webhookEndpoints, capped.account.id);
      const earlier = await startScan({ type: 'NMAP', targets: [nowhere(0)] }, capped.apiKey);
      const first = await startScan({ type: 'OWASP_ZAP', targets: [nowhereUrl(1), nowhereUrl(2), nowhereUrl(3)] }, capped.apiKey);
      expect(first.state).to.equal('QUEUED');

      const split = (await listScans({}, capped.apiKey)).reverse().filter((scan) => scan.id !== earlier.id);
      expect(split.map((scan) => scan.requested_targets[0]!.target)).to.deep.equal([nowhereUrl(1), nowhereUrl(2), nowhereUrl(3)]);
      expect(split[0]!.id).to.equal(first.id);
      expect(split.slice(1).map((scan) => scan.state)).to.deep.equal(['OVER_LIMIT', 'OVER_LIMIT']);
      for (const scan of split.slice(1)) expect(scan.conditions.map((condition) => condition.reason)).to.deep.equal(['MonthlyScanLimitReached']);
      expect(split.map((scan) => eventsOf(scan.id)[0])).to.deep.equal([
        { type: 'scan.created', state: 'QUEUED' },
        { type: 'scan.created', state: 'OVER_LIMIT' },
        { type: 'scan.created', state: 'OVER_LIMIT' },
      ]);
    });

    it('answers POSTs sent at once (sharing a commit) as one at a time: the limit counts each, a bad one fails alone, every answered scan is stored with its event', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 3 });
      receiveEvents(service.vigil.webhookEndpoints, capped.account.id);
      const bodies = range(8).map((i) => ({ type: 'NMAP', targets: [i === 4 ? 'not a target!' : nowhere(`burst-${i}`)] }));
      const responses = await Promise.all(bodies.map((body) => service.post('/v1/scans', body, { key: capped.apiKey })));
      expectError(responses[4]!, 400, /targets\[0\]/);
      const answered = responses
        .filter((_, i) => i !== 4)
        .map((response) => {
          expect(response.status, response.text).to.equal(200);
          return response.body.data as ScanJson;
        });
      expect(answered.filter((scan) => scan.state === 'QUEUED')).to.have.length(3);
      expect(answered.filter((scan) => scan.state === 'OVER_LIMIT')).to.have.length(4);
      for (const scan of answered) {
        expect((await getScan(scan.id, capped.apiKey)).requested_targets).to.deep.equal(scan.requested_targets);
        expect(eventsOf(scan.id)[0]).to.deep.equal({ type: 'scan.created', state: scan.state });
      }
      expect(await listScans({}, capped.apiKey)).to.have.length(7);
      const stored = service.vigil.db.prepare('SELECT target FROM targets WHERE account_id = ?').all(capped.account.id) as Array<{ target: string }>;
      expect(stored.map((row) => row.target)).to.not.include('not a target!');
    });

    it('admits scans up to the limit within one split request', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 2 });
      receiveEvents(service.vigil.webhookEndpoints, capped.account.id);
      await startScan({ type: 'OWASP_ZAP', targets: [nowhereUrl(1), nowhereUrl(2), nowhereUrl(3)] }, capped.apiKey);
      const created = service.vigil.db
        .prepare("SELECT json_extract(payload, '$.state') AS state FROM events WHERE account_id = ? AND type = 'scan.created' ORDER BY seq")
        .all(capped.account.id) as Array<{ state: string }>;
      expect(created.map((event) => event.state)).to.deep.equal(['QUEUED', 'QUEUED', 'OVER_LIMIT']);
    });
  });

  describe('list', () => {
    it('lists newest first', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const ids: string[] = [];
      for (const type of ['NMAP', 'SSLYZE', 'NUCLEI']) ids.push((await startScan({ type, targets: [nowhere(1)] }, capped.apiKey)).id);
      const response = await service.get('/v1/scans', { key: capped.apiKey });
      expect(response.status).to.equal(200);
      expect(response.body.data.map((scan: ScanJson) => scan.id)).to.deep.equal([...ids].reverse());
      expect(response.body).not.to.have.property('next_page_token');
    });

    it('pages with page_size and next_page_token; the last page has no token', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const ids: string[] = [];
      for (const i of range(5)) ids.push((await startScan({ type: 'NMAP', targets: [nowhere(i)] }, capped.apiKey)).id);
      const first = await service.get('/v1/scans', { key: capped.apiKey, query: { page_size: 2 } });
      expect(first.body.data).to.have.length(2);
      expect(first.body.next_page_token).to.be.a('string');
      const pages: string[][] = [];
      let token: string | undefined;
      do {
        const page = await service.get('/v1/scans', { key: capped.apiKey, query: { page_size: 2, page_token: token } });
        expect(page.status, page.text).to.equal(200);
        pages.push(page.body.data.map((scan: ScanJson) => scan.id));
        token = page.body.next_page_token;
      } while (token !== undefined && pages.length < 10);
      expect(pages.map((page) => page.length)).to.deep.equal([2, 2, 1]);
      expect(pages.flat()).to.deep.equal([...ids].reverse());
    });

    it('takes a page_size outside 1..499 as the default of 500', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      for (const i of range(3)) await startScan({ type: 'NMAP', targets: [nowhere(i)] }, capped.apiKey);
      for (const size of [0, 500, 1000, -1]) {
        const response = await service.get('/v1/scans', { key: capped.apiKey, query: { page_size: size } });
        expect(response.status, `page_size ${size}: ${response.text}`).to.equal(200);
        expect(response.body.data, `page_size ${size}`).to.have.length(3);
        expect(response.body, `page_size ${size}`).not.to.have.property('next_page_token');
      }
    });

    it('refuses an altered page_token with 400', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      for (const i of range(3)) await startScan({ type: 'NMAP', targets: [nowhere(i)] }, capped.apiKey);
      const token: string = (await service.get('/v1/scans', { key: capped.apiKey, query: { page_size: 1 } })).body.next_page_token;
      const altered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      expectError(await service.get('/v1/scans', { key: capped.apiKey, query: { page_size: 1, page_token: altered } }), 400);
    });

    it('filters by state', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 1 });
      const admitted = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      const over = await startScan({ type: 'NMAP', targets: [nowhere(2)] }, capped.apiKey);
      const filtered = (states: string[]) => listScans({ filters: JSON.stringify({ state: states }) }, capped.apiKey);
      expect((await filtered(['OVER_LIMIT'])).map((scan) => scan.id)).to.deep.equal([over.id]);
      const failed = await waitForTerminal(admitted.id, capped.apiKey);
      expect(failed.state).to.equal('FAILED');
      expect((await filtered(['FAILED'])).map((scan) => scan.id)).to.deep.equal([admitted.id]);
      expect((await filtered(['FAILED', 'OVER_LIMIT'])).map((scan) => scan.id)).to.deep.equal([over.id, admitted.id]);
      expect(await filtered(['RUNNING'])).to.deep.equal([]);
    });

    it('filters by type', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const nmap = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      const sslyze = await startScan({ type: 'SSLYZE', targets: [nowhere(1)] }, capped.apiKey);
      const udp = await startScan({ type: 'NMAP_UDP', targets: [nowhere(1)] }, capped.apiKey);
      const filtered = (types: string[]) => listScans({ filters: JSON.stringify({ type: types }) }, capped.apiKey);
      expect((await filtered(['SSLYZE'])).map((scan) => scan.id)).to.deep.equal([sslyze.id]);
      expect((await filtered(['NMAP', 'NMAP_UDP'])).map((scan) => scan.id)).to.deep.equal([udp.id, nmap.id]);
      expect(await filtered(['OPENVAS'])).to.deep.equal([]);
    });

    it('filters by scheduled_by', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const direct = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      expect(direct.scheduled_by).to.equal(null);
      const [scheduled] = service.vigil.scans.start(accountOf(capped.apiKey), { type: 'NMAP', targets: [nowhere(2)] }, 'schedule-1');
      const listed = await listScans({ filters: JSON.stringify({ scheduled_by: ['schedule-1'] }) }, capped.apiKey);
      expect(listed.map((scan) => scan.id)).to.deep.equal([scheduled!.id]);
      expect(listed[0]!.scheduled_by).to.equal('schedule-1');
      expect(await listScans({ filters: JSON.stringify({ scheduled_by: ['schedule-2'] }) }, capped.apiKey)).to.deep.equal([]);
      expect((await listScans({}, capped.apiKey)).map((scan) => scan.id)).to.deep.equal([scheduled!.id, direct.id]);
    });

    it('refuses an unknown filter key with 400 naming the allowed keys', async () => {
      const response = await service.get('/v1/scans', { query: { filters: JSON.stringify({ risk_definition: ['x'] }) } });
      expectError(response, 400, /risk_definition/);
      expect(response.body.error).to.match(/state, type, scheduled_by/);
    });

    it('refuses filters that are not JSON with 400', async () => {
      expectError(await service.get('/v1/scans', { query: { filters: 'state=QUEUED' } }), 400, /filters/);
    });

    it("never lists another account's scans", async () => {
      const one = service.createAccount('one', { monthlyScanLimit: 0 });
      const two = service.createAccount('two', { monthlyScanLimit: 0 });
      const mine = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, one.apiKey);
      const theirs = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, two.apiKey);
      expect((await listScans({}, one.apiKey)).map((scan) => scan.id)).to.deep.equal([mine.id]);
      expect((await listScans({}, two.apiKey)).map((scan) => scan.id)).to.deep.equal([theirs.id]);
      expect(await listScans({ filters: JSON.stringify({ state: ['OVER_LIMIT'] }) })).to.deep.equal([]);
    });
  });

  describe('get', () => {
    it('returns the account’s own scan', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const started = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      const response = await service.get(`/v1/scans/${started.id}`, { key: capped.apiKey });
      expect(response.status).to.equal(200);
      expect(response.body.data).to.deep.equal(started);
    });

    it('gives 404 for an unknown id', async () => {
      expectError(await service.get(`/v1/scans/${randomUUID()}`), 404, /No scan/);
    });

    it("gives 404 for another account's scan", async () => {
      const other = service.createAccount('other', { monthlyScanLimit: 0 });
      const theirs = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, other.apiKey);
      expectError(await service.get(`/v1/scans/${theirs.id}`), 404, /No scan/);
    });
  });

  describe('stop and delete of terminal scans', () => {
    it('refuses to stop a terminal scan with 400', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const over = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      expectError(await service.post(`/v1/scans/${over.id}/stop`, undefined, { key: capped.apiKey }), 400, /OVER_LIMIT/);
      const failed = await waitForTerminal((await startScan({ type: 'NMAP', targets: [nowhere(2)] })).id);
      expect(failed.state).to.equal('FAILED');
      expectError(await service.post(`/v1/scans/${failed.id}/stop`), 400, /FAILED/);
      expect((await getScan(failed.id)).state).to.equal('FAILED');
    });

    it('gives 404 when stopping an unknown scan', async () => {
      expectError(await service.post(`/v1/scans/${randomUUID()}/stop`), 404, /No scan/);
    });

    it('deletes an OVER_LIMIT scan: 200, then 404', async () => {
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const over = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, capped.apiKey);
      const deleted = await service.delete(`/v1/scans/${over.id}`, { key: capped.apiKey });
      expect(deleted.status, deleted.text).to.equal(200);
      expect(deleted.body.data).to.deep.equal({ id: over.id, deleted: true });
      expectError(await service.get(`/v1/scans/${over.id}`, { key: capped.apiKey }), 404);
      expectError(await service.delete(`/v1/scans/${over.id}`, { key: capped.apiKey }), 404);
      expect(await listScans({}, capped.apiKey)).to.deep.equal([]);
    });

    it('deletes a FAILED scan: 200, then 404', async () => {
      const failed = await waitForTerminal((await startScan({ type: 'NMAP', targets: [nowhere(1)] })).id);
      expect(failed.state).to.equal('FAILED');
      expect((await service.delete(`/v1/scans/${failed.id}`)).status).to.equal(200);
      expectError(await service.get(`/v1/scans/${failed.id}`), 404);
    });

    it("gives 404 when deleting or stopping another account's scan, and keeps it", async () => {
      const other = service.createAccount('other', { monthlyScanLimit: 0 });
      const theirs = await startScan({ type: 'NMAP', targets: [nowhere(1)] }, other.apiKey);
      expectError(await service.delete(`/v1/scans/${theirs.id}`), 404);
      expectError(await service.post(`/v1/scans/${theirs.id}/stop`), 404);
      expect(await getScan(theirs.id, other.apiKey)).to.deep.equal(theirs);
    });

    it('gives 404 when deleting an unknown scan', async () => {
      expectError(await service.delete(`/v1/scans/${randomUUID()}`), 404);
    });
  });
});

describe('HTTP /v1/scans with the only scan slot taken by a running scan', function () {
  this.timeout(120_000);
  let listener: TcpListener;
  let running: ScanJson;
  let queued: ScanJson;

  beforeEach(async () => {
    listener = await tcpListener({ silent: true });
    service = await TestService.start({ env: { ...LAB, VIGIL_MAX_CONCURRENT_SCANS: '1' } });
    receiveEvents(service.vigil.webhookEndpoints, service.accountId);
    running = await startScan({ type: 'NMAP', targets: ['127.0.0.1'] });
    running = await waitFor(
      () => getScan(running.id),
      (scan) => scan.state !== 'QUEUED',
      'the first scan to run',
    );
    expect(running.state, JSON.stringify(running.conditions)).to.equal('RUNNING');
    queued = await startScan({ type: 'NMAP', targets: [nowhere(1)] });
    expect(queued.state).to.equal('QUEUED');
  });
  afterEach(async () => {
    await service.stop();
    await listener.close();
  });

  it('keeps the second scan QUEUED while the slot is taken', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than one controller poll
    expect((await getScan(queued.id)).state).to.equal('QUEUED');
    expect((await getScan(running.id)).state).to.equal('RUNNING');
  });

  it('stops a QUEUED scan at once: STOPPED, with a scan.updated event; stopping it again gives 400', async () => {
    const response = await service.post(`/v1/scans/${queued.id}/stop`);
    expect(response.status, response.text).to.equal(200);
    expect(response.body.data).to.include({ id: queued.id, state: 'STOPPED' });
    expect((await getScan(queued.id)).state).to.equal('STOPPED');
    expect(eventsOf(queued.id)).to.deep.equal([
      { type: 'scan.created', state: 'QUEUED' },
      { type: 'scan.updated', state: 'STOPPED' },
    ]);
    expectError(await service.post(`/v1/scans/${queued.id}/stop`), 400, /STOPPED/);
    const deleted = await service.delete(`/v1/scans/${queued.id}`);
    expect(deleted.status, deleted.text).to.equal(200);
    expectError(await service.get(`/v1/scans/${queued.id}`), 404);
  });

  it('refuses to delete a QUEUED scan with 400 saying why, and keeps it', async () => {
    const response = await service.delete(`/v1/scans/${queued.id}`);
    expectError(response, 400, /QUEUED/);
    expect(response.body.error).to.match(/SUCCEEDED, STOPPED, FAILED or OVER_LIMIT/);
    expect((await getScan(queued.id)).state).to.equal('QUEUED');
  });

  it('refuses to delete a RUNNING scan with 400 saying why, and keeps it', async () => {
    const response = await service.delete(`/v1/scans/${running.id}`);
    expectError(response, 400, /RUNNING/);
    expect((await getScan(running.id)).state).to.equal('RUNNING');
  });

  it('gives 404 when another account stops or deletes the QUEUED scan, which stays QUEUED', async () => {
    const other = service.createAccount('other');
    expectError(await service.post(`/v1/scans/${queued.id}/stop`, undefined, { key: other.apiKey }), 404);
    expectError(await service.delete(`/v1/scans/${queued.id}`, { key: other.apiKey }), 404);
    expectError(await service.get(`/v1/scans/${queued.id}`, { key: other.apiKey }), 404);
    expect((await getScan(queued.id)).state).to.equal('QUEUED');
  });
});

describe('HTTP /v1/results', function () {
  this.timeout(120_000);
  let listener: TcpListener | undefined;

  beforeEach(async () => {
    service = await TestService.start({ env: LAB });
  });
  afterEach(async () => {
    await service.stop();
    await listener?.close();
    listener = undefined;
  });

  it('gives 404 for an unknown result id', async () => {
    expectError(await service.get(`/v1/results/${randomUUID()}`), 404, /No result/);
  });

  it("serves a result file to its account only: another account's result id gives 404, and so does the file of a deleted scan", async () => {
    listener = await tcpListener();
    const started = await startScan({ type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await waitForTerminal(started.id);
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    expect(done.results).to.have.length(2); // nmap's XML, then the scan's PDF
    const resultId = done.results[0]!.result_id;

    const own = await service.get(`/v1/results/${resultId}`);
    expect(own.status).to.equal(200);
    expect(own.text).to.match(/<nmaprun/);
    // A small output is kept in its result row (migration 0018), written with SUCCEEDED: no file of its own.
    const row = service.vigil.db.prepare('SELECT size, sha256, content FROM scan_results WHERE id = ?').get(resultId) as {
      size: number;
      sha256: string;
      content: Buffer | null;
    };
    expect(row.content?.toString('utf8')).to.equal(own.text);
    expect(row.size).to.equal(Buffer.byteLength(own.text));
    expect(row.sha256).to.equal(createHash('sha256').update(own.text).digest('hex'));
    expect(existsSync(join(service.settings.dataDir, 'results', started.id, 'nmap.xml'))).to.equal(false);

    const other = service.createAccount('other');
    expectError(await service.get(`/v1/results/${resultId}`, { key: other.apiKey }), 404, /No result/);

    expect((await service.delete(`/v1/scans/${started.id}`)).status).to.equal(200);
    expectError(await service.get(`/v1/results/${resultId}`), 404, /No result/);
  });

  it('serves a result kept in its row after a restart, as committed with SUCCEEDED', async () => {
    listener = await tcpListener();
    const dir = tempDir();
    try {
      await service.stop();
      service = await TestService.start({ env: LAB, dataDir: dir.path });
      const key = service.apiKey;
      const started = await startScan({ type: 'NMAP', targets: ['127.0.0.1'] });
      const done = await waitForTerminal(started.id);
      expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
      const resultId = done.results[0]!.result_id;
      const before = await service.get(`/v1/results/${resultId}`);
      expect(before.status).to.equal(200);
      expect(before.text).to.match(/<nmaprun/);

      await service.stop();
      service = await TestService.start({ env: LAB, dataDir: dir.path, accountName: 'after-restart' });
      const after = await service.get(`/v1/results/${resultId}`, { key });
      expect(after.status).to.equal(200);
      expect(after.text).to.equal(before.text);
      expect(after.headers.get('content-length')).to.equal(String(Buffer.byteLength(before.text)));
      expectError(await service.get(`/v1/results/${resultId}`), 404, /No result/);
    } finally {
      await service.stop();
      dir.remove();
      service = await TestService.start({ env: LAB });
    }
  });
});
