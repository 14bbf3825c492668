/**
 * /v1/risks over HTTP against the real service (SPEC.md Risks; CONTRACT.md
 * accept/unaccept). Running real scans to create risks is slow, so risks are
 * seeded straight into the store for targets created through the API; the
 * lifecycle that creates them from scans is tested in
 * test/controller/risk-lifecycle.test.ts and test/e2e/risk-lifecycle.test.ts.
 * Every response is validated against the OpenAPI document by TestService.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { ScanType, ThreatLevel } from '../../src/domain/risks/finding.js';
import type { Risk, RiskStatus } from '../../src/domain/risks/risk.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { TestService, type TestResponse } from '../support/test-service.js';
import { receiveEvents } from '../support/event-receiver.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };

interface RiskJson {
  id: string;
  target_id: string;
  target: string;
  target_label: string;
  tags: string[];
  status: RiskStatus;
  first_detected_at: string;
  last_detected_at: string;
  is_accepted: boolean;
  accepted_by: Array<{ note: string; created_at: string; last_updated_at: string }>;
  risk_definition: { scan_type: ScanType; title: string; threat_level: ThreatLevel; cvss: string; additional_info: Record<string, unknown> };
}

interface SeedOptions {
  scanType?: ScanType;
  title?: string;
  threatLevel?: ThreatLevel;
  status?: RiskStatus;
  qod?: number;
  firstDetectedAt?: string;
  lastDetectedAt?: string;
  accountId?: string;
}

let service: TestService;
let seq = 0;

function expectError(response: TestResponse, status: number, message?: RegExp): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error).to.be.a('string').that.is.not.empty;
  if (message !== undefined) expect(response.body.error).to.match(message);
}

async function createTarget(body: Record<string, unknown>, key?: string): Promise<{ id: string; target: string }> {
  const response = await service.post('/v1/targets', body, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

/** A risk as a scan of the target would have stored it; each seeded one is created one second after the previous. */
function seedRisk(targetId: string, options: SeedOptions = {}): Risk {
  seq++;
  const at = new Date(Date.parse('2026-02-01T00:00:00.000Z') + seq * 1000).toISOString();
  const scanType = options.scanType ?? 'NMAP';
  const title = options.title ?? `Open port ${8000 + seq}/tcp`;
  const risk: Risk = {
    id: randomUUID(),
    accountId: options.accountId ?? service.accountId,
    targetId,
    scanType,
    fingerprint: `test:${seq}`,
    status: options.status ?? 'OPEN',
    firstDetectedAt: options.firstDetectedAt ?? at,
    lastDetectedAt: options.lastDetectedAt ?? at,
    isAccepted: false,
    acceptedBy: [],
    definition: {
      scan_type: scanType,
      title,
      threat_level: options.threatLevel ?? 'INFO',
      description: `${title} was seen.`,
      solution: 'Close it.',
      cvss: '',
      additional_info: options.qod === undefined ? { port: 8000 + seq } : { qod: options.qod, nvt_oid: `1.3.6.1.4.1.25623.1.0.${seq}` },
    },
    createdAt: at,
  };
  new SqliteRiskRepository(service.vigil.db).insert(risk);
  return risk;
}

async function listRisks(query: Record<string, string | number | undefined> = {}, key?: string): Promise<{ data: RiskJson[]; next_page_token?: string }> {
  const response = await service.get('/v1/risks', { key, query });
  expect(response.status, response.text).to.equal(200);
  return response.body;
}

const ids = (risks: Array<{ id: string }>) => risks.map((risk) => risk.id);
const filtered = async (filters: Record<string, string[]>, key?: string) => ids((await listRisks({ filters: JSON.stringify(filters) }, key)).data);

/** The risk events stored for a risk, oldest first. */
function riskEventsOf(riskId: string): Array<{ type: string; account_id: string; payload: RiskJson }> {
  return (
    service.vigil.db
      .prepare("SELECT type, account_id, payload FROM events WHERE type LIKE 'risk.%' AND json_extract(payload, '$.id') = ? ORDER BY seq")
      .all(riskId) as Array<{ type: string; account_id: string; payload: string }>
  ).map((row) => ({ ...row, payload: JSON.parse(row.payload) as RiskJson }));
}

describe('HTTP /v1/risks', function () {
  this.timeout(60_000);

  beforeEach(async () => {
    service = await TestService.start({ env: LAB });
    // Events are stored only for their receivers.
    receiveEvents(service.vigil.webhookEndpoints, service.accountId);
  });
  afterEach(async () => {
    await service.stop();
  });

  describe('list', () => {
    it('lists newest first by creation, not by latest detection, CLOSED risks included', async () => {
      const target = await createTarget({ target: '127.0.0.1', label: 'Loopback', tags: ['Lab'] });
      const oldest = seedRisk(target.id);
      const closed = seedRisk(target.id, { status: 'CLOSED' });
      const newest = seedRisk(target.id);
      // The oldest risk is detected again, later than everything else: it stays last.
      const repository = new SqliteRiskRepository(service.vigil.db);
      repository.update({ ...oldest, lastDetectedAt: '2026-06-01T00:00:00.000Z' });

      const { data, next_page_token } = await listRisks();
      expect(ids(data)).to.deep.equal([newest.id, closed.id, oldest.id]);
      expect(next_page_token).to.equal(undefined);
      expect(data[1]!.status).to.equal('CLOSED');
      expect(data[2]).to.deep.include({
        target_id: target.id,
        target: '127.0.0.1',
        target_label: 'Loopback',
        tags: ['lab'],
        status: 'OPEN',
        first_detected_at: oldest.firstDetectedAt,
        last_detected_at: '2026-06-01T00:00:00.000Z',
        is_accepted: false,
        accepted_by: [],
      });
      expect(data[2]!.risk_definition).to.deep.equal(oldest.definition);
    });

    it("shows the target's current label and tags", async () => {
      const target = await createTarget({ target: '127.0.0.1', label: 'before', tags: ['one'] });
      seedRisk(target.id);
      expect((await service.put(`/v1/targets/${target.id}`, { label: 'after', tags: ['Two'] })).status).to.equal(200);
      const [risk] = (await listRisks()).data;
      expect(risk).to.deep.include({ target_label: 'after', tags: ['two'] });
    });

    it('lists only risks of the caller account', async () => {
      const mine = await createTarget({ target: '127.0.0.1' });
      const other = service.createAccount('other');
      const theirs = await createTarget({ target: '127.0.0.1' }, other.apiKey);
      const myRisk = seedRisk(mine.id);
      const theirRisk = seedRisk(theirs.id, { accountId: other.account.id });
      expect(ids((await listRisks()).data)).to.deep.equal([myRisk.id]);
      expect(ids((await listRisks({}, other.apiKey)).data)).to.deep.equal([theirRisk.id]);
    });

    it('gives an empty list when the account has no risks', async () => {
      expect(await listRisks()).to.deep.equal({ data: [] });
    });

    describe('filters', () => {
      let web: { id: string };
      let db: { id: string };
      let risks: Record<string, Risk>;

      beforeEach(async () => {
        web = await createTarget({ target: '127.0.0.1', tags: ['Prod', 'web'] });
        db = await createTarget({ target: '127.0.0.2', tags: ['staging'] });
        risks = {
          webPort: seedRisk(web.id, { title: 'Open port 443/tcp' }),
          webCritical: seedRisk(web.id, { title: 'CVE-2024-1 on port 443/tcp', threatLevel: 'CRITICAL' }),
          webClosed: seedRisk(web.id, { title: 'Open port 80/tcp', status: 'CLOSED' }),
          dbUdp: seedRisk(db.id, { scanType: 'NMAP_UDP', title: 'Open port 161/udp' }),
          dbHigh: seedRisk(db.id, { scanType: 'NUCLEI', title: 'Exposed panel', threatLevel: 'HIGH' }),
        };
      });

      const expectIds = async (filters: Record<string, string[]>, expected: Risk[]) =>
        expect(await filtered(filters), JSON.stringify(filters)).to.deep.equal(ids([...expected].reverse()));

      it('filters by target_id', async () => {
        await expectIds({ target_id: [db.id] }, [risks.dbUdp!, risks.dbHigh!]);
        await expectIds({ target_id: [web.id, db.id] }, Object.values(risks));
        await expectIds({ target_id: [randomUUID()] }, []);
      });

      it('filters by status', async () => {
        await expectIds({ status: ['CLOSED'] }, [risks.webClosed!]);
        await expectIds({ status: ['OPEN'] }, [risks.webPort!, risks.webCritical!, risks.dbUdp!, risks.dbHigh!]);
      });

      it("filters by the target's tags, whatever their case", async () => {
        await expectIds({ tags: ['prod'] }, [risks.webPort!, risks.webCritical!, risks.webClosed!]);
        await expectIds({ tags: ['PROD'] }, [risks.webPort!, risks.webCritical!, risks.webClosed!]);
        await expectIds({ tags: ['staging', 'web'] }, Object.values(risks));
        await expectIds({ tags: ['nowhere'] }, []);
      });

      it('filters by risk_definition.scan_type', async () => {
        await expectIds({ 'risk_definition.scan_type': ['NMAP_UDP'] }, [risks.dbUdp!]);
        await expectIds({ 'risk_definition.scan_type': ['NMAP', 'NUCLEI'] }, [risks.webPort!, risks.webCritical!, risks.webClosed!, risks.dbHigh!]);
      });

      it('filters by risk_definition.threat_level', async () => {
        await expectIds({ 'risk_definition.threat_level': ['CRITICAL', 'HIGH'] }, [risks.webCritical!, risks.dbHigh!]);
      });

      it('filters by risk_definition.title (exact)', async () => {
        await expectIds({ 'risk_definition.title': ['Open port 443/tcp'] }, [risks.webPort!]);
        await expectIds({ 'risk_definition.title': ['Open port 443'] }, []);
      });

      it('combines keys with AND, and treats an empty array as no filter', async () => {
        await expectIds({ target_id: [web.id], status: ['OPEN'], 'risk_definition.threat_level': ['INFO'] }, [risks.webPort!]);
        await expectIds({ status: [] }, Object.values(risks));
      });

      it('refuses an unknown key with 400 naming the allowed keys', async () => {
        const response = await service.get('/v1/risks', { query: { filters: JSON.stringify({ severity: ['HIGH'] }) } });
        expectError(response, 400, /severity/);
        for (const key of ['target_id', 'status', 'tags', 'risk_definition.scan_type', 'risk_definition.threat_level', 'risk_definition.title']) {
          expect(response.body.error).to.include(key);
        }
      });

      it('refuses filters that are not a JSON object of string arrays with 400', async () => {
        expectError(await service.get('/v1/risks', { query: { filters: 'status=OPEN' } }), 400, /filters/);
        expectError(await service.get('/v1/risks', { query: { filters: JSON.stringify(['OPEN']) } }), 400, /filters/);
        expectError(await service.get('/v1/risks', { query: { filters: JSON.stringify({ status: 'OPEN' }) } }), 400, /filters\.status/);
      });

      describe('in the bracket form axios and qs send', () => {
        /** The query string exactly as given: no re-encoding by a URL builder. */
        const rawList = (query: string, key?: string | null) => service.get(`/v1/risks?${query}`, { key });
        const rawIds = async (query: string) => {
          const response = await rawList(query);
          expect(response.status, response.text).to.equal(200);
          return ids(response.body.data);
        };

        it('gives the same risks as the JSON form, for every bracket form', async () => {
          const forms: Array<[string, Record<string, string[]>]> = [
            ['filters[status][0]=OPEN&filters[risk_definition.scan_type][0]=NMAP', { status: ['OPEN'], 'risk_definition.scan_type': ['NMAP'] }],
            [
              'filters[risk_definition.scan_type][]=NMAP_UDP&filters[risk_definition.scan_type][]=NUCLEI',
              { 'risk_definition.scan_type': ['NMAP_UDP', 'NUCLEI'] },
            ],
            ['filters[status]=CLOSED', { status: ['CLOSED'] }],
            ['filters%5Btags%5D%5B%5D=staging', { tags: ['staging'] }],
            [
              'filters%5Bstatus%5D%5B0%5D=OPEN&filters%5Brisk_definition.threat_level%5D%5B0%5D=CRITICAL&filters%5Brisk_definition.threat_level%5D%5B1%5D=HIGH',
              { status: ['OPEN'], 'risk_definition.threat_level': ['CRITICAL', 'HIGH'] },
            ],
            [
              `filters[target_id][]=${db.id}&filters[risk_definition.title][0]=Open%20port%20161%2Fudp`,
              { target_id: [db.id], 'risk_definition.title': ['Open port 161/udp'] },
            ],
          ];
          for (const [query, json] of forms) {
            const expected = await filtered(json);
            expect(expected, query).to.not.be.empty;
            expect(await rawIds(query), query).to.deep.equal(expected);
          }
          expect(await rawIds('filters[status][0]=OPEN&filters[risk_definition.scan_type][0]=NMAP')).to.deep.equal(ids([risks.webCritical!, risks.webPort!]));
        });

        it('keeps the bracket-form filters across pages', async () => {
          const first = await rawList('filters[status][]=OPEN&page_size=3');
          expect(first.body.data).to.have.length(3);
          const second = await rawList(`filters[status][]=OPEN&page_size=3&page_token=${encodeURIComponent(first.body.next_page_token)}`);
          expect([...ids(first.body.data), ...ids(second.body.data)]).to.deep.equal(await filtered({ status: ['OPEN'] }));
        });

        it('refuses both forms in one request with 400 saying to use one', async () => {
          const response = await rawList(`filters=${encodeURIComponent('{"status":["OPEN"]}')}&filters[status][]=CLOSED`);
          expectError(response, 400, /two forms; use one/);
        });

        it('names the allowed keys for an unknown bracket key, as for the JSON form', async () => {
          expectError(await rawList('filters[severity][]=HIGH'), 400, /key 'severity' is not supported here; allowed keys: target_id, status/);
          expectError(await rawList('filters[status][0][x]=OPEN'), 400, /not a filters form/);
        });

        it('answers 401 before judging the filters of a request without an API key', async () => {
          const response = await rawList('filters={}&filters[status][]=CLOSED', null);
          expectError(response, 401);
        });
      });
    });

    describe('sort', () => {
      let web: { id: string };
      let db: { id: string };
      let risks: Record<string, Risk>;

      beforeEach(async () => {
        web = await createTarget({ target: '127.0.0.2' });
        db = await createTarget({ target: '127.0.0.1' });
        risks = {
          low: seedRisk(web.id, { threatLevel: 'LOW', firstDetectedAt: '2026-01-03T00:00:00.000Z', lastDetectedAt: '2026-02-01T00:00:00.000Z' }),
          critical: seedRisk(db.id, { threatLevel: 'CRITICAL', firstDetectedAt: '2026-01-02T00:00:00.000Z', lastDetectedAt: '2026-02-03T00:00:00.000Z' }),
          medium: seedRisk(web.id, {
            threatLevel: 'MEDIUM',
            firstDetectedAt: '2026-01-01T00:00:00.000Z',
            lastDetectedAt: '2026-02-02T00:00:00.000Z',
            status: 'CLOSED',
          }),
          highOld: seedRisk(db.id, { threatLevel: 'HIGH', firstDetectedAt: '2026-01-04T00:00:00.000Z', lastDetectedAt: '2026-02-04T00:00:00.000Z' }),
          highNew: seedRisk(web.id, { threatLevel: 'HIGH', firstDetectedAt: '2026-01-05T00:00:00.000Z', lastDetectedAt: '2026-02-05T00:00:00.000Z' }),
        };
      });

      /** Every page of the sorted list, page_size at a time. */
      async function sorted(sort: string, pageSize = 2, extra: Record<string, string> = {}): Promise<Risk[]> {
        const byId = new Map(Object.values(risks).map((risk) => [risk.id, risk]));
        const found: Risk[] = [];
        let token: string | undefined;
        do {
          const page = await listRisks({ sort, page_size: pageSize, page_token: token, ...extra });
          found.push(...page.data.map((risk) => byId.get(risk.id)!));
          token = page.next_page_token;
        } while (token !== undefined);
        return found;
      }

      it('sorts by threat_level desc: the most severe first, newest first within a level, across pages', async () => {
        expect(await sorted('threat_level desc')).to.deep.equal([risks.critical, risks.highNew, risks.highOld, risks.medium, risks.low]);
        expect(await sorted('threat_level asc', 1)).to.deep.equal([risks.low, risks.medium, risks.highOld, risks.highNew, risks.critical]);
        expect(await sorted('threat_level', 3)).to.deep.equal(await sorted('threat_level asc'));
      });

      it('sorts by first_detected_at, last_detected_at and target, both ways', async () => {
        expect(await sorted('first_detected_at asc')).to.deep.equal([risks.medium, risks.critical, risks.low, risks.highOld, risks.highNew]);
        expect(await sorted('last_detected_at desc')).to.deep.equal([risks.highNew, risks.highOld, risks.critical, risks.medium, risks.low]);
        expect(await sorted('target asc')).to.deep.equal([risks.critical, risks.highOld, risks.low, risks.medium, risks.highNew]);
        expect(await sorted('target desc', 4)).to.deep.equal([risks.highNew, risks.medium, risks.low, risks.highOld, risks.critical]);
      });

      it('sorts within filters, in either filters form', async () => {
        const open = [risks.critical!, risks.highNew!, risks.highOld!, risks.low!];
        expect(await sorted('threat_level desc', 2, { filters: JSON.stringify({ status: ['OPEN'] }) })).to.deep.equal(open);
        const response = await service.get('/v1/risks?filters[status][0]=OPEN&sort=threat_level%20desc');
        expect(ids(response.body.data)).to.deep.equal(ids(open));
      });

      it("refuses an unknown field, a wrong direction and two fields with 400, in targets' words", async () => {
        expectError(
          await service.get('/v1/risks', { query: { sort: 'severity desc' } }),
          400,
          /sort field 'severity' is not supported; allowed fields: threat_level, first_detected_at, last_detected_at, target/,
        );
        expectError(
          await service.get('/v1/risks', { query: { sort: 'threat_level upward' } }),
          400,
          /sort 'threat_level upward' must be a field optionally followed by a space and asc or desc/,
        );
        expectError(await service.get('/v1/risks', { query: { sort: 'threat_level desc,target asc' } }), 400, /one field at a time/);
      });

      it('refuses a page_token from another sort with 400', async () => {
        const page = await listRisks({ sort: 'threat_level desc', page_size: 2 });
        expectError(await service.get('/v1/risks', { query: { sort: 'target asc', page_token: page.next_page_token } }), 400);
        expectError(await service.get('/v1/risks', { query: { page_token: page.next_page_token } }), 400);
      });
    });

    describe('pagination', () => {
      it('pages with next_page_token, newest first, until a last page without one', async () => {
        const target = await createTarget({ target: '127.0.0.1' });
        const seeded = Array.from({ length: 7 }, () => seedRisk(target.id));
        const seen: string[] = [];
        let token: string | undefined;
        let pages = 0;
        do {
          const page = await listRisks({ page_size: 3, page_token: token });
          expect(page.data.length).to.be.at.most(3);
          seen.push(...ids(page.data));
          token = page.next_page_token;
          pages++;
        } while (token !== undefined && pages < 10);
        expect(pages).to.equal(3);
        expect(seen).to.deep.equal(ids(seeded).reverse());
      });

      it('keeps the filters across pages', async () => {
        const target = await createTarget({ target: '127.0.0.1' });
        const open = Array.from({ length: 4 }, (_, i) => seedRisk(target.id, { status: i % 2 === 0 ? 'OPEN' : 'CLOSED' })).filter((r) => r.status === 'OPEN');
        const filters = JSON.stringify({ status: ['OPEN'] });
        const first = await listRisks({ page_size: 1, filters });
        expect(ids(first.data)).to.deep.equal([open[1]!.id]);
        const second = await listRisks({ page_size: 1, filters, page_token: first.next_page_token });
        expect(ids(second.data)).to.deep.equal([open[0]!.id]);
        expect(second.next_page_token).to.equal(undefined);
      });

      it('omits next_page_token when a full page ends the list', async () => {
        const target = await createTarget({ target: '127.0.0.1' });
        seedRisk(target.id);
        seedRisk(target.id);
        const page = await listRisks({ page_size: 2 });
        expect(page.data).to.have.length(2);
        expect(page).to.not.have.property('next_page_token');
      });

      it("refuses a garbled token, another account's token and a targets list token with 400", async () => {
        const target = await createTarget({ target: '127.0.0.1' });
        seedRisk(target.id);
        seedRisk(target.id);
        expectError(await service.get('/v1/risks', { query: { page_token: 'garbage' } }), 400, /page_token/);

        const other = service.createAccount('other');
        const theirTarget = await createTarget({ target: '127.0.0.1' }, other.apiKey);
        seedRisk(theirTarget.id, { accountId: other.account.id });
        seedRisk(theirTarget.id, { accountId: other.account.id });
        const theirs = (await listRisks({ page_size: 1 }, other.apiKey)).next_page_token;
        expect(theirs).to.be.a('string');
        expectError(await service.get('/v1/risks', { query: { page_token: theirs } }), 400, /page_token/);

        // A token of another list of the same account does not page risks either.
        await createTarget({ target: '127.0.0.2' });
        const targetsToken = (await service.get('/v1/targets', { query: { page_size: 1 } })).body.next_page_token as string;
        expect(targetsToken).to.be.a('string');
        expectError(await service.get('/v1/risks', { query: { page_token: targetsToken } }), 400, /page_token/);
      });
    });

    it("leaves out OpenVAS risks below the account's minimum Quality of Detection, and only OpenVAS ones", async () => {
      const target = await createTarget({ target: '127.0.0.1' });
      seedRisk(target.id, { scanType: 'OPENVAS', title: 'Low QoD', qod: 30 });
      const atMinimum = seedRisk(target.id, { scanType: 'OPENVAS', title: 'At the minimum', qod: 70 });
      const high = seedRisk(target.id, { scanType: 'OPENVAS', title: 'High QoD', qod: 99 });
      const withoutQod = seedRisk(target.id, { scanType: 'OPENVAS', title: 'Old export without QoD' });
      const nmap = seedRisk(target.id, { scanType: 'NMAP', title: 'Open port 1/tcp', qod: 10 });
      expect(ids((await listRisks()).data)).to.deep.equal(ids([nmap, withoutQod, high, atMinimum]));
      expect(await filtered({ 'risk_definition.scan_type': ['OPENVAS'] })).to.deep.equal(ids([withoutQod, high, atMinimum]));

      const lenient = service.createAccount('lenient', { minOpenvasQod: 0 });
      const theirTarget = await createTarget({ target: '127.0.0.1' }, lenient.apiKey);
      const theirLow = seedRisk(theirTarget.id, { accountId: lenient.account.id, scanType: 'OPENVAS', title: 'Low QoD', qod: 30 });
      expect(ids((await listRisks({}, lenient.apiKey)).data)).to.deep.equal([theirLow.id]);

      const strict = service.createAccount('strict', { minOpenvasQod: 100 });
      const strictTarget = await createTarget({ target: '127.0.0.1' }, strict.apiKey);
      seedRisk(strictTarget.id, { accountId: strict.account.id, scanType: 'OPENVAS', qod: 99 });
      expect((await listRisks({}, strict.apiKey)).data).to.deep.equal([]);
    });
  });

  describe('get', () => {
    it('returns { data: Risk } with every field', async () => {
      const target = await createTarget({ target: '127.0.0.1', label: 'Loopback', tags: ['lab'] });
      const risk = seedRisk(target.id, { threatLevel: 'MEDIUM' });
      const response = await service.get(`/v1/risks/${risk.id}`);
      expect(response.status, response.text).to.equal(200);
      expect(Object.keys(response.body)).to.deep.equal(['data']);
      expect(response.body.data).to.deep.equal({
        id: risk.id,
        target_id: target.id,
        target: '127.0.0.1',
        target_label: 'Loopback',
        tags: ['lab'],
        status: 'OPEN',
        first_detected_at: risk.firstDetectedAt,
        last_detected_at: risk.lastDetectedAt,
        is_accepted: false,
        accepted_by: [],
        risk_definition: risk.definition,
      });
    });

    it("gives 404 for an unknown id and for another account's risk", async () => {
      expectError(await service.get(`/v1/risks/${randomUUID()}`), 404);
      expectError(await service.get('/v1/risks/not-a-risk'), 404);
      const other = service.createAccount('other');
      const theirs = seedRisk((await createTarget({ target: '127.0.0.1' }, other.apiKey)).id, { accountId: other.account.id });
      expectError(await service.get(`/v1/risks/${theirs.id}`), 404);
      expect((await service.get(`/v1/risks/${theirs.id}`, { key: other.apiKey })).status).to.equal(200);
    });

    it('gives 401 without an API key', async () => {
      expectError(await service.get(`/v1/risks/${randomUUID()}`, { key: null }), 401);
      expectError(await service.get('/v1/risks', { key: null }), 401);
    });

    it('gives 404 once the target is deleted: its risks go with it', async () => {
      const target = await createTarget({ target: '127.0.0.1' });
      const risk = seedRisk(target.id);
      expect((await service.delete(`/v1/targets/${target.id}`)).status).to.equal(200);
      expectError(await service.get(`/v1/risks/${risk.id}`), 404);
      expect((await listRisks()).data).to.deep.equal([]);
    });
  });

  describe('accept and unaccept', () => {
    async function criticalRisk() {
      const target = await createTarget({ target: '127.0.0.1' });
      const risk = seedRisk(target.id, { threatLevel: 'CRITICAL', title: 'CVE-2024-99999 on port 8080/tcp' });
      return { target, risk };
    }
    const healthOf = async (targetId: string) => (await service.get(`/v1/targets/${targetId}`)).body.data.health_score;

    it('accepts with a note: 200 { data: Risk } with is_accepted and an accepted_by entry, and a risk.updated event', async () => {
      const { risk } = await criticalRisk();
      const before = Date.now();
      const response = await service.post(`/v1/risks/${risk.id}/accept`, { note: 'a false positive: the fix is backported' });
      expect(response.status, response.text).to.equal(200);
      expect(Object.keys(response.body)).to.deep.equal(['data']);
      const accepted = response.body.data as RiskJson;
      expect(accepted).to.deep.include({ id: risk.id, is_accepted: true, status: 'OPEN' });
      expect(accepted.accepted_by).to.have.length(1);
      const [entry] = accepted.accepted_by;
      expect(entry!.note).to.equal('a false positive: the fix is backported');
      expect(entry!.created_at).to.equal(entry!.last_updated_at);
      expect(Date.parse(entry!.created_at)).to.be.within(before - 1000, Date.now() + 1000);
      expect((await service.get(`/v1/risks/${risk.id}`)).body.data).to.deep.equal(accepted);

      const events = riskEventsOf(risk.id);
      expect(events.map((event) => event.type)).to.deep.equal(['risk.updated']);
      expect(events[0]!.account_id).to.equal(service.accountId);
      expect(events[0]!.payload).to.deep.equal(accepted);
    });

    it("raises the target's health score while the critical risk is accepted, and lowers it again on unaccept", async () => {
      const { target, risk } = await criticalRisk();
      // Seeding bypasses the history, so the score is recomputed by the first acceptance change.
      await service.post(`/v1/risks/${risk.id}/unaccept`);
      expect(await healthOf(target.id)).to.deep.equal({ score: 60, grade: 'C' });
      await service.post(`/v1/risks/${risk.id}/accept`, { note: 'by design' });
      expect(await healthOf(target.id)).to.deep.equal({ score: 100, grade: 'A' });
      await service.post(`/v1/risks/${risk.id}/unaccept`);
      expect(await healthOf(target.id)).to.deep.equal({ score: 60, grade: 'C' });
    });

    it('un-accepts: 200, is_accepted false, the accepted_by history kept, a second risk.updated event', async () => {
      const { risk } = await criticalRisk();
      await service.post(`/v1/risks/${risk.id}/accept`, { note: 'by design' });
      const response = await service.post(`/v1/risks/${risk.id}/unaccept`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data.is_accepted).to.equal(false);
      expect(response.body.data.accepted_by.map((entry: { note: string }) => entry.note)).to.deep.equal(['by design']);
      const events = riskEventsOf(risk.id);
      expect(events.map((event) => `${event.type}:${event.payload.is_accepted}`)).to.deep.equal(['risk.updated:true', 'risk.updated:false']);

      const again = await service.post(`/v1/risks/${risk.id}/accept`, { note: 'accepted again' });
      expect(again.body.data.accepted_by.map((entry: { note: string }) => entry.note)).to.deep.equal(['by design', 'accepted again']);
    });

    const badNotes: Array<[string, unknown, RegExp]> = [
      ['no body', undefined, /body/],
      ['a body without note', {}, /note/],
      ['an empty note', { note: '' }, /note/],
      ['a blank note', { note: '   \t ' }, /note/],
      ['a note over 1000 characters', { note: 'x'.repeat(1001) }, /note/],
      ['a note that is an array', { note: ['by design'] }, /note/],
      // Request bodies are never type-coerced: 42 is not the note "42".
      ['a note that is a number', { note: 42 }, /note/],
    ];
    for (const [what, body, message] of badNotes) {
      it(`refuses ${what} with 400, changing nothing and sending no event`, async () => {
        const { risk } = await criticalRisk();
        const response = await service.request('POST', `/v1/risks/${risk.id}/accept`, body === undefined ? {} : { body });
        expectError(response, 400, message);
        expect((await service.get(`/v1/risks/${risk.id}`)).body.data).to.deep.include({ is_accepted: false, accepted_by: [] });
        expect(riskEventsOf(risk.id)).to.deep.equal([]);
      });
    }

    it('accepts a note of exactly 1000 characters', async () => {
      const { risk } = await criticalRisk();
      const response = await service.post(`/v1/risks/${risk.id}/accept`, { note: 'y'.repeat(1000) });
      expect(response.status, response.text).to.equal(200);
      expect(response.body.data.accepted_by[0].note).to.have.length(1000);
    });

    it("gives 404 for an unknown risk and for another account's risk, leaving it untouched", async () => {
      expectError(await service.post(`/v1/risks/${randomUUID()}/accept`, { note: 'x' }), 404);
      expectError(await service.post(`/v1/risks/${randomUUID()}/unaccept`), 404);
      const other = service.createAccount('other');
      const theirs = seedRisk((await createTarget({ target: '127.0.0.1' }, other.apiKey)).id, { accountId: other.account.id });
      expectError(await service.post(`/v1/risks/${theirs.id}/accept`, { note: 'mine now' }), 404);
      expectError(await service.post(`/v1/risks/${theirs.id}/unaccept`), 404);
      expect((await service.get(`/v1/risks/${theirs.id}`, { key: other.apiKey })).body.data.is_accepted).to.equal(false);
      expect(riskEventsOf(theirs.id)).to.deep.equal([]);
    });

    it('lists accepted risks like any other, with is_accepted', async () => {
      const { risk } = await criticalRisk();
      await service.post(`/v1/risks/${risk.id}/accept`, { note: 'by design' });
      const [listed] = (await listRisks()).data;
      expect(listed).to.deep.include({ id: risk.id, is_accepted: true });
    });
  });
});
