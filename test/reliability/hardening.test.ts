/**
 * Issue 16 findings, each as a request against the real service: percent
 * escapes and Content-Encoding, list contract points, lone surrogates,
 * request ids, throttled wrong keys, schedule dates, oversized and hostile
 * uploads, and the start-up rollback of interrupted imports and orphan files.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { MAX_FINDINGS_PER_SCAN } from '../../src/parsers/finding-bounds.js';
import { TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';
import { nmapReport } from '../support/nmap-report.js';

async function upload(service: TestService, sourceId: string, content: string, key?: string) {
  const form = new FormData();
  form.set('source_id', sourceId);
  form.set('scan_type', 'NMAP');
  form.set('file', new Blob([content]), 'scan.xml');
  return service.request('POST', '/v1/results', { formData: form, ...(key === undefined ? {} : { key }) });
}

async function newSource(service: TestService, key?: string): Promise<string> {
  const response = await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'hardening' }, key === undefined ? {} : { key });
  expect(response.status).to.equal(200);
  return response.body.data.id as string;
}

/** A GET from another loopback address than the test's other requests. */
function getFrom(localAddress: string, url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers: { 'X-SERVICE-API-KEY': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('reliability: the findings of issue 16 stay fixed', function () {
  this.timeout(60_000);
  let service: TestService;

  before(async () => {
    service = await TestService.start({ env: { VIGIL_RATE_LIMIT_BURST: '100000', VIGIL_RATE_LIMIT_PER_SECOND: '100000' } });
  });
  after(async () => {
    await service.stop();
  });

  describe('paths and bodies that cannot be read', () => {
    const paths = [
      '/v1/targets/%ff',
      '/v1/scans/%ff',
      '/v1/risks/%ff',
      '/v1/results/%ff',
      '/v1/scans/scheduled/%ff',
      '/v1/sources/%E0%A4%A',
      '/dashboard/risks/%ff',
      '/dashboard/%ff',
    ];
    for (const path of paths) {
      it(`answers GET ${path} with 400, with and without a key`, async () => {
        expect((await service.get(path, { key: null })).status).to.equal(400);
        const response = await service.get(path);
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(/percent-escape/);
      });
    }

    it('answers a malformed escape in the internal upload path with 400', async () => {
      const response = await service.request('PUT', '/internal/v1/scans/%ff/results/x.xml', {
        rawBody: 'x',
        contentType: 'application/octet-stream',
        key: null,
      });
      expect(response.status).to.equal(400);
    });

    for (const encoding of ['gzip', 'deflate', 'br', 'x-unknown']) {
      it(`refuses a body with Content-Encoding: ${encoding} with 415, with and without a key`, async () => {
        for (const key of [null, service.apiKey]) {
          const response = await service.request('POST', '/v1/targets', { rawBody: 'not compressed', headers: { 'Content-Encoding': encoding }, key });
          expect(response.status).to.equal(415);
          expect(response.body.error).to.match(/Content-Encoding/);
        }
      });
    }
  });

  describe('list contract points', () => {
    for (const value of ['Infinity', '', '1e3', '2.5', 'NaN']) {
      it(`refuses page_size=${JSON.stringify(value)} with 400`, async () => {
        const response = await service.get(`/v1/targets?page_size=${value}`);
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(/page_size/);
      });
    }

    it('still takes integers outside 1..499 as the default', async () => {
      expect((await service.get('/v1/targets?page_size=10000')).status).to.equal(200);
      expect((await service.get('/v1/targets?page_size=-3')).status).to.equal(200);
    });

    it('ends a page of large targets early at its byte budget, and the next page continues without a gap or a repeat', async () => {
      const zap = {
        headers: Array.from({ length: 50 }, (_, index) => ({ key: `X-Big-${index}`, value: 'h'.repeat(8000) })),
        cookies: Array.from({ length: 50 }, (_, index) => ({ name: `c${index}`, value: 'c'.repeat(4000) })),
      };
      for (let index = 0; index < 8; index++) {
        const created = await service.post('/v1/targets', { target: `https://big-${index}.example.com`, tags: ['big'], scanner_settings: { zap } });
        expect(created.status, JSON.stringify(created.body).slice(0, 300)).to.equal(200);
      }
      const filters = JSON.stringify({ tags: ['big'] });
      const first = await service.get('/v1/targets', { query: { filters } });
      expect(first.body.data.length).to.be.within(1, 7);
      expect(first.text.length).to.be.lessThan(5 * 1024 * 1024);
      const second = await service.get('/v1/targets', { query: { filters, page_token: first.body.next_page_token } });
      const ids = [...first.body.data, ...second.body.data].map((target: { id: string }) => target.id);
      expect(new Set(ids).size).to.equal(ids.length);
      expect(ids.length).to.equal(8);
      expect(second.body.next_page_token).to.equal(undefined);
    });

    it('refuses broken filters on the scheduled scans list as on the others', async () => {
      expect((await service.get('/v1/scans/scheduled', { query: { filters: '{' } })).status).to.equal(400);
      expect((await service.get('/v1/scans/scheduled', { query: { filters: '{"name":["x"]}' } })).status).to.equal(400);
      expect((await service.get('/v1/scans/scheduled', { query: { filters: '{}' } })).status).to.equal(200);
    });
  });

  describe('text stays valid Unicode', () => {
    it('refuses a lone surrogate in a JSON body with 400 naming the field', async () => {
      const response = await service.request('POST', '/v1/targets', { rawBody: '{"target":"lone.example.com","label":"a\\ud800b"}' });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/^label holds a lone UTF-16 surrogate/);
      expect((await service.get('/v1/targets', { query: { filters: '{"target":["lone.example.com"]}' } })).body.data).to.deep.equal([]);
    });

    it('refuses a lone surrogate in filters with 400', async () => {
      const response = await service.get('/v1/targets', { query: { filters: '{"label":["\\udc00"]}' } });
      expect(response.status).to.equal(400);
    });

    it('counts a label in UTF-16 code units, in the check and when read back', async () => {
      const label = '😀'.repeat(127); // 254 code units, 127 code points
      const created = await service.post('/v1/targets', { target: 'emoji.example.com', label });
      expect(created.status).to.equal(200);
      expect(created.body.data.label).to.equal(label);
      const tooLong = await service.post('/v1/targets', { target: 'emoji2.example.com', label: `${label}😀` }); // 256 units
      expect(tooLong.status).to.equal(400);
    });
  });

  describe('request ids', () => {
    it("never uses the client's X-Request-Id as ref, and logs it beside Vigil's", async () => {
      const response = await service.get('/v1/targets/unknown', { headers: { 'X-Request-Id': 'client-chosen-id-123' } });
      expect(response.status).to.equal(404);
      expect(response.body.ref).to.not.equal('client-chosen-id-123');
      expect(response.headers.get('x-request-id')).to.equal(response.body.ref);
      const line = service.logLines.map((text) => JSON.parse(text)).find((entry) => entry.req_id === response.body.ref && entry.msg === 'request completed');
      expect(line).to.include({ client_req_id: 'client-chosen-id-123' });
    });
  });

  describe('scheduled scan dates', () => {
    it('refuses a start_time outside the years 2000 to 2199 with 400', async () => {
      for (const start of ['0001-01-01T00:00:00Z', '1999-12-31T23:59:59Z', '2200-01-01T00:00:00Z']) {
        const response = await service.post('/v1/scans/scheduled', {
          name: 'old',
          schedule: 'MONTHLY',
          start_time: start,
          scan_types: ['NMAP'],
          filter_set: { tags: ['x'] },
          email_notification: 'NEVER',
        });
        expect(response.status, start).to.equal(400);
        expect(response.body.error).to.match(/2000 to 2199/);
      }
    });

    it('computes a MONTHLY next_run from an early start in the coming month, not centuries away', async () => {
      const response = await service.post('/v1/scans/scheduled', {
        name: 'early',
        schedule: 'MONTHLY',
        start_time: '2000-01-31T00:00:00Z',
        scan_types: ['NMAP'],
        filter_set: { tags: ['x'] },
        email_notification: 'NEVER',
      });
      expect(response.status).to.equal(200);
      const next = Date.parse(response.body.data.next_run);
      expect(next).to.be.greaterThan(Date.now());
      expect(next - Date.now()).to.be.lessThan(32 * 24 * 3600 * 1000);
    });
  });

  describe('uploads', () => {
    it(`refuses a file with more than ${MAX_FINDINGS_PER_SCAN} findings with 400 naming the cap, storing nothing`, async () => {
      const sourceId = await newSource(service);
      const before = (await service.get('/v1/scans')).body.data.length;
      const response = await upload(service, sourceId, nmapReport(101, 500));
      expect(response.status).to.equal(400);
      expect(response.body.error).to.include('more than 50,000 findings');
      expect((await service.get('/v1/scans')).body.data.length).to.equal(before);
    });

    it('records an upload of more hosts than one transaction takes, every risk once, and leaves no pending marker', async () => {
      const sourceId = await newSource(service);
      const response = await upload(service, sourceId, nmapReport(600, 3, 46));
      expect(response.status).to.equal(200);
      expect(response.body.data.targets).to.have.length(600);
      expect(response.body.data.risks).to.deep.equal({ new_open: 1800, still_open: 0, closed: 0 });
      const again = await upload(service, sourceId, nmapReport(600, 3, 46));
      expect(again.body.data.risks).to.deep.equal({ new_open: 0, still_open: 1800, closed: 0 });
      const db = new BetterSqlite3(join(service.settings.dataDir, 'vigil.db'), { readonly: true });
      try {
        expect(db.prepare('SELECT COUNT(*) AS n FROM pending_recordings').get()).to.deep.equal({ n: 0 });
      } finally {
        db.close();
      }
    });

    it('caps a 2 MiB service name: the title is cut and marked, additional_info stays within its cap', async () => {
      const sourceId = await newSource(service);
      const huge = 'A'.repeat(2 * 1024 * 1024);
      const file = `<nmaprun><host><status state="up"/><address addr="47.1.1.1" addrtype="ipv4"/><ports><port protocol="tcp" portid="80"><state state="open"/><service name="${huge}" product="${huge}"/></port></ports></host></nmaprun>`;
      const response = await upload(service, sourceId, file);
      expect(response.status).to.equal(200);
      const risks = await service.get('/v1/risks', { query: { filters: JSON.stringify({ target_id: [response.body.data.targets[0].target_id] }) } });
      const risk = risks.body.data[0].risk_definition;
      expect(risk.title.length).to.be.at.most(512);
      expect(risk.title).to.match(/… \[truncated\]$/);
      expect(JSON.stringify(risk.additional_info).length).to.be.at.most(32 * 1024 + 100);
      expect(risk.additional_info.truncated).to.equal(true);
      expect(risks.text.length).to.be.lessThan(200 * 1024);
    });
    it('caps a ZAP alert whose name and description run to megabytes', async () => {
      const sourceId = await newSource(service);
      const report = JSON.parse(readFileSync(new URL('../fixtures/zap/securecodebox-zap-example.com.json', import.meta.url), 'utf8'));
      const alert = report.site[0].alerts[0];
      alert.alert = alert.name = 'N'.repeat(3 * 1024 * 1024);
      alert.desc = 'D'.repeat(3 * 1024 * 1024);
      const form = new FormData();
      form.set('source_id', sourceId);
      form.set('scan_type', 'OWASP_ZAP');
      form.set('target', 'https://www.example.com');
      form.set('file', new Blob([JSON.stringify(report)]), 'zap.json');
      const response = await service.request('POST', '/v1/results', { formData: form });
      expect(response.status).to.equal(200);
      const risks = await service.get('/v1/risks', { query: { filters: JSON.stringify({ target_id: [response.body.data.targets[0].target_id] }) } });
      const definitions = risks.body.data.map((risk: any) => risk.risk_definition);
      expect(definitions.some((definition: any) => definition.title.endsWith('… [truncated]'))).to.equal(true);
      for (const definition of definitions) {
        expect(definition.title.length).to.be.at.most(512);
        expect(definition.description.length).to.be.at.most(16 * 1024);
      }
      expect(risks.text.length).to.be.lessThan(1024 * 1024);
    });
  });

  describe('wrong API keys', () => {
    it('are throttled per client address with 429 and Retry-After, while a valid key from another address still works', async () => {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let attempt = 0; attempt < 25; attempt++) {
        const response = await service.get('/v1/targets', { key: `wrong-key-${attempt}` });
        statuses.push(response.status);
        if (response.status === 429) retryAfter = response.headers.get('retry-after');
      }
      expect(statuses.slice(0, 20)).to.deep.equal(Array(20).fill(401));
      expect(statuses.slice(20)).to.deep.equal(Array(5).fill(429));
      expect(Number(retryAfter)).to.be.at.least(1);
      expect(await getFrom('127.0.0.2', `${service.baseUrl}/v1/targets`, service.apiKey)).to.equal(200);
    });
  });
});

describe('reliability: start-up removes what a crash left behind', function () {
  this.timeout(60_000);

  it('rolls back an import whose pending marker survived, and removes unreferenced, stale staged and temporary files and left-over work directories', async () => {
    const dir = tempDir();
    try {
      let service = await TestService.start({ dataDir: dir.path });
      const sourceId = await newSource(service);
      const kept = await upload(service, sourceId, nmapReport(3, 2, 48));
      const cut = await upload(service, sourceId, nmapReport(3, 2, 49));
      expect([kept.status, cut.status]).to.deep.equal([200, 200]);
      const cutScan = cut.body.data.scan_id as string;
      const keptScan = kept.body.data.scan_id as string;
      await service.stop();

      // As a crash would leave it: the second import's marker, an orphan folder, a temporary file.
      const db = new BetterSqlite3(join(dir.path, 'vigil.db'));
      db.prepare("INSERT INTO pending_recordings (scan_id, account_id, kind, started_at) VALUES (?, ?, 'IMPORT', ?)").run(
        cutScan,
        service.accountId,
        new Date().toISOString(),
      );
      db.close();
      mkdirSync(join(dir.path, 'results', 'orphan-scan'), { recursive: true });
      writeFileSync(join(dir.path, 'results', 'orphan-scan', 'nmap.xml'), 'x');
      writeFileSync(join(dir.path, 'results', keptScan, 'imported-result.xml.partial'), 'x');
      mkdirSync(join(dir.path, 'uploads', 'finished-or-unknown-scan'), { recursive: true });
      writeFileSync(join(dir.path, 'uploads', 'finished-or-unknown-scan', 'nmap.xml'), 'x');
      // A scan's work directory that outlived it (its scanner died with the service, or its removal did not finish).
      mkdirSync(join(dir.path, 'work', 'scan-cut-short', 'nested'), { recursive: true });
      writeFileSync(join(dir.path, 'work', 'scan-cut-short', 'nested', 'nmap.xml'), 'x');

      service = await TestService.start({ dataDir: dir.path, accountName: 'second-start' });
      try {
        expect((await service.get(`/v1/scans/${cutScan}`, { key: null })).status).to.equal(401);
        const reopened = new BetterSqlite3(join(dir.path, 'vigil.db'), { readonly: true });
        try {
          expect(reopened.prepare('SELECT COUNT(*) AS n FROM scans WHERE id = ?').get(cutScan)).to.deep.equal({ n: 0 });
          expect(reopened.prepare('SELECT COUNT(*) AS n FROM scans WHERE id = ?').get(keptScan)).to.deep.equal({ n: 1 });
          expect(reopened.prepare("SELECT COUNT(*) AS n FROM risks r JOIN targets t ON t.id = r.target_id WHERE t.target LIKE '49.%'").get()).to.deep.equal({
            n: 0,
          });
          expect(reopened.prepare("SELECT COUNT(*) AS n FROM risks r JOIN targets t ON t.id = r.target_id WHERE t.target LIKE '48.%'").get()).to.deep.equal({
            n: 6,
          });
          expect(reopened.prepare('SELECT COUNT(*) AS n FROM pending_recordings').get()).to.deep.equal({ n: 0 });
          expect(reopened.pragma('integrity_check', { simple: true })).to.equal('ok');
        } finally {
          reopened.close();
        }
        expect(existsSync(join(dir.path, 'results', cutScan))).to.equal(false);
        expect(existsSync(join(dir.path, 'results', 'orphan-scan'))).to.equal(false);
        expect(existsSync(join(dir.path, 'uploads', 'finished-or-unknown-scan'))).to.equal(false);
        expect(readdirSync(join(dir.path, 'work'))).to.deep.equal([]);
        expect(readdirSync(join(dir.path, 'results', keptScan)).sort()).to.deep.equal(['imported-result.xml', 'scan-report.pdf']); // the upload and its scan's PDF
      } finally {
        await service.stop();
      }
    } finally {
      dir.remove();
    }
  });
});
