/**
 * /v1/reports over HTTP against the real service (SPEC.md Reports;
 * CONTRACT.md; issue 14). PDFs are read back with poppler's pdftotext and
 * rendered to PNG with pdftoppm (test-artifacts/reports, to look at); CSVs
 * are read back with csv-parse. Risks are seeded straight into the store
 * (test/support/report-data.ts). JSON responses are validated against the
 * OpenAPI document by TestService.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Risk } from '../../src/domain/risks/risk.js';
import { CSV_COLUMNS } from '../../src/reports/csv-report.js';
import { HOSTILE, seedRisks } from '../support/report-data.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };
const ARTIFACTS = 'test-artifacts/reports';

interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json?: { error: string };
}

let service: TestService;
let auditorKey: string;
let auditorId: string;
let targets: Record<'web' | 'db' | 'lab', { id: string; target: string }>;
let risks: Record<string, Risk>;

async function createTarget(body: Record<string, unknown>, key: string): Promise<{ id: string; target: string }> {
  const response = await service.post('/v1/targets', body, { key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function createReport(body: unknown, key = auditorKey): Promise<string> {
  const response = await service.post('/v1/reports', body, { key });
  expect(response.status, response.text).to.equal(200);
  expect(response.body.data.id).to.be.a('string');
  return response.body.data.id;
}

async function download(id: string, query: Record<string, string> = {}, key = auditorKey, on = service): Promise<Download> {
  const url = new URL(`/v1/reports/${encodeURIComponent(id)}`, on.baseUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const response = await fetch(url, { headers: { 'X-SERVICE-API-KEY': key } });
  const bytes = Buffer.from(await response.arrayBuffer());
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
  const json = isJson ? JSON.parse(bytes.toString('utf8')) : undefined;
  if (isJson) on.validateResponse('GET', url.pathname, response.status, json);
  return { status: response.status, headers: response.headers, bytes, json };
}

function pdfToText(pdf: Buffer, name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.pdf`);
  writeFileSync(path, pdf);
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
}

function csvRows(bytes: Buffer): Array<Record<string, string>> {
  return parse(bytes, { columns: true, relax_quotes: false, record_delimiter: '\r\n' }) as Array<Record<string, string>>;
}

async function csvIds(body: unknown): Promise<string[]> {
  const id = await createReport({ report_format: 'CSV', ...(body as object) });
  const file = await download(id);
  expect(file.status).to.equal(200);
  return csvRows(file.bytes)
    .map((row) => row.risk_id!)
    .sort();
}

const idsOf = (...names: string[]) => names.map((name) => risks[name]!.id).sort();

async function expectError(body: unknown, status: number, message: RegExp, key = auditorKey): Promise<void> {
  const response = await service.post('/v1/reports', body, { key });
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error).to.match(message);
}

/** Three targets of the auditor account (CSV export on) with risks of every level, status and some hostile text. */
async function seedAuditor(): Promise<void> {
  const auditor = service.createAccount('auditor', { features: ['csv_export'] });
  auditorKey = auditor.apiKey;
  auditorId = auditor.account.id;
  targets = {
    web: await createTarget({ target: 'https://shop.example.com', label: HOSTILE.label, tags: ['prod', 'web'] }, auditorKey),
    db: await createTarget({ target: '127.0.0.2', label: 'Database', tags: ['prod'] }, auditorKey),
    lab: await createTarget({ target: '127.0.0.3', tags: ['lab'] }, auditorKey),
  };
  const [xss, sqli, tls, port, closed, accepted, info] = seedRisks(service.vigil.db, [
    {
      accountId: auditorId,
      targetId: targets.web.id,
      title: HOSTILE.title,
      threatLevel: 'HIGH',
      cvss: '8.1',
      description: HOSTILE.description,
      solution: HOSTILE.solution,
      additionalInfo: {
        cves: ['CVE-2024-1111'],
        references: [HOSTILE.reference, 'https://owasp.org/xss'],
        evidence: HOSTILE.externalImage,
        matched_at: HOSTILE.plusCell,
      },
    },
    {
      accountId: auditorId,
      targetId: targets.web.id,
      title: 'SQL injection in /login',
      threatLevel: 'CRITICAL',
      cvss: '9.8',
      scanType: 'OWASP_ZAP',
      description: HOSTILE.minusCell,
      solution: HOSTILE.atCell,
    },
    {
      accountId: auditorId,
      targetId: targets.db.id,
      title: 'Weak TLS cipher suites',
      threatLevel: 'LOW',
      scanType: 'SSLYZE',
      description: HOSTILE.tabCell,
      solution: HOSTILE.crCell,
    },
    { accountId: auditorId, targetId: targets.db.id, title: 'Open port 5432/tcp', threatLevel: 'INFO', scanType: 'NMAP' },
    { accountId: auditorId, targetId: targets.lab.id, title: 'Outdated nginx', threatLevel: 'MEDIUM', status: 'CLOSED', scanType: 'NUCLEI' },
    { accountId: auditorId, targetId: targets.lab.id, title: 'Directory listing', threatLevel: 'LOW', accepted: true, scanType: 'NUCLEI' },
    { accountId: auditorId, targetId: targets.lab.id, title: 'Server banner', threatLevel: 'INFO', scanType: 'NMAP' },
  ]);
  risks = { xss: xss!, sqli: sqli!, tls: tls!, port: port!, closed: closed!, accepted: accepted!, info: info! };
}

describe('HTTP /v1/reports', function () {
  this.timeout(120_000);

  before(async () => {
    service = await TestService.start({ env: LAB });
    await seedAuditor();
  });
  after(async () => {
    await service.stop();
  });

  describe('PDF', () => {
    let text: string;
    let pdf: Buffer;

    before(async () => {
      const id = await createReport({ report_format: 'PDF', targets_filter: { tags: ['prod', 'lab'] } });
      const file = await download(id, { filename: 'Quarterly report.pdf' });
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('application/pdf');
      expect(file.headers.get('content-disposition')).to.equal('attachment; filename="Quarterly report.pdf"');
      pdf = file.bytes;
      text = pdfToText(pdf, 'report');
    });

    it('is a PDF with the account, the filters and the counts on its first pages', () => {
      expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
      expect(text).to.include('Security findings for auditor');
      expect(text).to.include('Targets tags: prod, lab');
      expect(text).to.include('7 risks on 3 targets');
      expect(text).to.match(/Open\s+6/);
      expect(text).to.match(/Closed\s+1/);
      expect(text).to.match(/Accepted \(false positive or by design\)\s+1/);
    });

    it('has contents with page numbers, and numbered pages', () => {
      const pages = text.split('\f').filter((page) => page.trim() !== '');
      expect(text).to.match(/Contents/);
      expect(text).to.match(/Findings by target\s+(\d+)/);
      expect(pages[0]).to.match(/Page 1 of (\d+)/);
      expect(pages.at(-1)).to.match(new RegExp(`Page ${pages.length} of ${pages.length}`));
    });

    it('lists each target with its risks, the most severe first, drawing hostile text as text', () => {
      const web = text.indexOf('SQL injection in /login');
      expect(web).to.be.greaterThan(-1);
      expect(text.indexOf('<script>alert("title")</script> Reflected XSS')).to.be.greaterThan(web);
      expect(text).to.include('=HYPERLINK("https://evil.example/x","click")');
      expect(text).to.include('CVE-2024-1111');
      expect(text).to.include('javascript:alert(document.cookie)');
      expect(text).to.include('Weak TLS cipher suites');
      // Risks are seeded straight into the store, so no scan ever covered these targets: no score is claimed for them.
      expect(text).to.include('Health not scanned yet');
      // Characters the standard fonts lack become '?', never wrong glyphs.
      expect(text).to.include('Zürich ??');
    });

    it('draws every word at a readable size (pdftotext -bbox)', () => {
      const boxes = execFileSync('pdftotext', ['-bbox', join(ARTIFACTS, 'report.pdf'), '-'], { encoding: 'utf8' });
      const heights = [...boxes.matchAll(/<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((match) => ({
        word: match[3],
        height: Number(match[2]) - Number(match[1]),
      }));
      expect(heights.length).to.be.greaterThan(100);
      expect(heights.filter((entry) => entry.height < 6)).to.deep.equal([]);
    });

    it('writes the counts in white on the coloured tiles of the summary page (pixels of pdftoppm)', () => {
      // Page 3 is the summary; at 72 dpi a pixel is a point. The CRITICAL tile spans x 50..141, y 103..153.
      const ppm = execFileSync('pdftoppm', ['-f', '3', '-l', '3', '-r', '72', join(ARTIFACTS, 'report.pdf')], { maxBuffer: 16 * 1024 * 1024 });
      const header = ppm.toString('latin1', 0, 20).match(/^P6\s+(\d+)\s+(\d+)\s+255\s/)!;
      const width = Number(header[1]);
      const offset = header[0].length;
      let white = 0;
      let tile = 0;
      for (let y = 106; y < 150; y++) {
        for (let x = 53; x < 138; x++) {
          const at = offset + (y * width + x) * 3;
          const [r, g, b] = [ppm[at]!, ppm[at + 1]!, ppm[at + 2]!];
          if (r > 230 && g > 230 && b > 230) white++;
          else if (r > 100 && g < 40 && b < 60) tile++;
        }
      }
      expect(tile, 'the tile is drawn in the CRITICAL colour').to.be.greaterThan(1000);
      expect(white, 'white text on the tile').to.be.greaterThan(20);
    });

    it('renders to PNG pages with pdftoppm', () => {
      execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '4', join(ARTIFACTS, 'report.pdf'), join(ARTIFACTS, 'report-page')]);
      const pngs = readdirSync(ARTIFACTS).filter((name) => name.startsWith('report-page') && name.endsWith('.png'));
      expect(pngs.length).to.be.at.least(3);
      for (const png of pngs) expect(statSync(join(ARTIFACTS, png)).size).to.be.greaterThan(5_000);
    });
  });

  describe('HTML', () => {
    it('is one self-contained, escaped file with no script and no external resource', async () => {
      const id = await createReport({ report_format: 'HTML' });
      const file = await download(id);
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(file.headers.get('content-disposition')).to.match(/^attachment; filename="vigil-report-\d{4}-\d\d-\d\d\.html"$/);
      const page = file.bytes.toString('utf8');
      writeFileSync(join(ARTIFACTS, 'report.html'), page);
      expect(page).to.not.match(/<script/i);
      expect(page).to.not.match(/<(img|iframe|link|object|embed)\b/i);
      expect(page).to.not.match(/<[^>]*\son\w+=/i);
      expect(page).to.include('&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;');
      expect(page).to.include('&lt;img src=&quot;https://evil.example/pixel.png&quot;&gt;');
      expect(page).to.not.match(/href="javascript:/i);
      expect(page).to.include('<a href="https://owasp.org/xss" rel="noopener noreferrer">');
      expect(page).to.include('<svg');
      expect(page).to.match(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;/);
    });
  });

  describe('CSV', () => {
    it('is RFC 4180 with the documented columns; commas, quotes and line breaks survive and formulas are neutralised', async () => {
      const id = await createReport({ report_format: 'CSV' });
      const file = await download(id);
      expect(file.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      const text = file.bytes.toString('utf8');
      expect(text.split('\r\n')[0]).to.equal(CSV_COLUMNS.join(','));
      const rows = csvRows(file.bytes);
      expect(rows).to.have.length(7);
      const xss = rows.find((row) => row.risk_id === risks.xss!.id)!;
      expect(xss.title).to.equal(HOSTILE.title);
      expect(xss.description).to.equal(HOSTILE.description);
      expect(xss.solution).to.equal(`'${HOSTILE.solution}`);
      expect(xss.target_label).to.equal(HOSTILE.label);
      expect(xss.tags).to.equal('prod; web');
      expect(xss.cves).to.equal('CVE-2024-1111');
      expect(xss.cvss).to.equal('8.1');
      const sqli = rows.find((row) => row.risk_id === risks.sqli!.id)!;
      expect([sqli.description, sqli.solution]).to.deep.equal([`'${HOSTILE.minusCell}`, `'${HOSTILE.atCell}`]);
      const tls = rows.find((row) => row.risk_id === risks.tls!.id)!;
      expect([tls.description, tls.solution]).to.deep.equal([`'${HOSTILE.tabCell}`, `'${HOSTILE.crCell}`]);
      expect(rows.find((row) => row.risk_id === risks.accepted!.id)!.accepted).to.equal('yes');
      // Most severe first within each target, the worst target first.
      expect(rows.slice(0, 2).map((row) => row.risk_id)).to.deep.equal([risks.sqli!.id, risks.xss!.id]);
    });
  });

  describe('filters', () => {
    const cases: Array<[string, unknown, string[]]> = [
      ['no filters: every risk, closed and accepted included', {}, ['xss', 'sqli', 'tls', 'port', 'closed', 'accepted', 'info']],
      ['targets_filter.target_ids', { targets_filter: { target_ids: ['@db'] } }, ['tls', 'port']],
      ['targets_filter.tags (alternatives)', { targets_filter: { tags: ['web', 'LAB'] } }, ['xss', 'sqli', 'closed', 'accepted', 'info']],
      ['targets_filter.label', { targets_filter: { label: ['Database'] } }, ['tls', 'port']],
      ['targets_filter keys combine with AND', { targets_filter: { tags: ['prod'], label: ['Database'] } }, ['tls', 'port']],
      ['risks_filter.status', { risks_filter: { status: ['CLOSED'] } }, ['closed']],
      ['risks_filter.risk_definition.threat_level', { risks_filter: { 'risk_definition.threat_level': ['CRITICAL', 'LOW'] } }, ['sqli', 'tls', 'accepted']],
      ['risks_filter.risk_definition.scan_type', { risks_filter: { 'risk_definition.scan_type': ['NMAP'] } }, ['port', 'info']],
      ['risks_filter.risk_definition.title', { risks_filter: { 'risk_definition.title': ['Outdated nginx'] } }, ['closed']],
      ['risks_filter.target_id', { risks_filter: { target_id: ['@lab'] } }, ['closed', 'accepted', 'info']],
      ['risks_filter.tags', { risks_filter: { tags: ['web'] } }, ['xss', 'sqli']],
      [
        'both filters together',
        { targets_filter: { tags: ['prod'] }, risks_filter: { status: ['OPEN'], 'risk_definition.threat_level': ['INFO', 'HIGH'] } },
        ['xss', 'port'],
      ],
      ['an empty array does not filter', { targets_filter: { tags: [] } }, ['xss', 'sqli', 'tls', 'port', 'closed', 'accepted', 'info']],
    ];
    for (const [name, body, expected] of cases) {
      it(name, async () => {
        // '@db' stands for the id of the db target, known only once the targets exist.
        const resolved = JSON.parse(JSON.stringify(body).replace(/"@(web|db|lab)"/g, (_match, key: 'web' | 'db' | 'lab') => JSON.stringify(targets[key].id)));
        expect(await csvIds(resolved)).to.deep.equal(idsOf(...expected));
      });
    }

    it('shows the filters used on the report', async () => {
      const id = await createReport({ report_format: 'HTML', targets_filter: { label: ['Database'] }, risks_filter: { status: ['OPEN'] } });
      const page = (await download(id)).bytes.toString('utf8');
      expect(page).to.include('<li>Targets label: Database</li>');
      expect(page).to.include('<li>Risks status: OPEN</li>');
    });
  });

  describe('refusals', () => {
    it('refuses unknown filter keys, naming the allowed ones', async () => {
      await expectError({ report_format: 'PDF', targets_filter: { owner: ['me'] } }, 400, /targets_filter key 'owner' .*allowed keys: target_ids, tags, label/);
      await expectError(
        { report_format: 'PDF', risks_filter: { severity: ['HIGH'] } },
        400,
        /risks_filter key 'severity' .*allowed keys: target_id, status, tags, risk_definition.scan_type/,
      );
    });

    it('refuses non-array values, unknown formats, too many values and long values', async () => {
      await expectError({ report_format: 'PDF', targets_filter: { tags: 'prod' } }, 400, /targets_filter.tags/);
      await expectError({ report_format: 'PDF', risks_filter: { status: [1] } }, 400, /risks_filter.status/);
      await expectError({ report_format: 'PDF', risks_filter: [] }, 400, /risks_filter/);
      await expectError({ report_format: 'DOCX' }, 400, /report_format.*PDF, HTML, CSV/);
      await expectError({}, 400, /report_format/);
      await expectError({ report_format: 'PDF', targets_filter: { tags: Array.from({ length: 101 }, (_, index) => `t${index}`) } }, 400, /targets_filter.tags/);
      await expectError({ report_format: 'PDF', targets_filter: { label: ['x'.repeat(2049)] } }, 400, /targets_filter.label/);
      const id = await createReport({ report_format: 'HTML' });
      const unknownFormat = await download(id, { format: 'XLSX' });
      expect(unknownFormat.status).to.equal(400);
      expect(unknownFormat.json!.error).to.match(/format.*PDF, HTML, CSV/);
      const longName = await download(id, { filename: 'a'.repeat(201) });
      expect(longName.status).to.equal(400);
      expect(longName.json!.error).to.match(/filename/);
    });

    it('gives 403 for CSV without the csv_export feature, at creation and at download', async () => {
      await expectError({ report_format: 'CSV' }, 403, /csv_export/, service.apiKey);
      const id = await createReport({ report_format: 'PDF' }, service.apiKey);
      const file = await download(id, { format: 'CSV' }, service.apiKey);
      expect(file.status).to.equal(403);
      expect(file.json!.error).to.match(/csv_export/);
      expect((await download(id, { format: 'HTML' }, service.apiKey)).status).to.equal(200);
    });

    it("gives 404 for another account's report and for unknown ids", async () => {
      const id = await createReport({ report_format: 'PDF' });
      const other = await download(id, {}, service.apiKey);
      expect(other.status).to.equal(404);
      expect(other.json!.error).to.match(/report/);
      expect((await download('00000000-0000-4000-8000-000000000000')).status).to.equal(404);
      expect((await download('../../vigil.db')).status).to.equal(404);
    });

    it("does not let another account's target ids into a report", async () => {
      const id = await createReport({ report_format: 'HTML', targets_filter: { target_ids: [targets.web.id] } }, service.apiKey);
      const page = (await download(id, {}, service.apiKey)).bytes.toString('utf8');
      expect(page).to.include('0 risks on 0 targets');
      expect(page).to.not.include('SQL injection');
    });
  });

  describe('snapshot', () => {
    it('an account with no risks gets a valid empty report in every format', async () => {
      const empty = service.createAccount('empty', { features: ['csv_export'] });
      const id = await createReport({ report_format: 'PDF' }, empty.apiKey);
      const text = pdfToText((await download(id, {}, empty.apiKey)).bytes, 'empty');
      expect(text).to.include('0 risks on 0 targets');
      expect(text).to.include('No risks match the filters.');
      expect((await download(id, { format: 'HTML' }, empty.apiKey)).bytes.toString()).to.include('No risks match the filters.');
      const csv = await download(id, { format: 'CSV' }, empty.apiKey);
      expect(csv.bytes.toString()).to.equal(`${CSV_COLUMNS.join(',')}\r\n`);
    });

    it('later downloads in other formats show the risks as they were at creation', async () => {
      const scratch = await createTarget({ target: '127.0.0.9', label: 'Scratch' }, auditorKey);
      const [doomed] = seedRisks(service.vigil.db, [{ accountId: auditorId, targetId: scratch.id, title: 'Risk that will be deleted', threatLevel: 'HIGH' }]);
      const id = await createReport({ report_format: 'HTML', targets_filter: { target_ids: [scratch.id, targets.db.id] } });
      expect((await service.post(`/v1/risks/${risks.port!.id}/accept`, { note: 'expected port' }, { key: auditorKey })).status).to.equal(200);
      seedRisks(service.vigil.db, [{ accountId: auditorId, targetId: targets.db.id, title: 'Risk found after the report', threatLevel: 'CRITICAL' }]);
      expect((await service.delete(`/v1/targets/${scratch.id}`, { key: auditorKey })).status).to.equal(200);

      const text = pdfToText((await download(id, { format: 'PDF' })).bytes, 'snapshot');
      expect(text).to.include('Risk that will be deleted');
      expect(text).to.not.include('Risk found after the report');
      const rows = csvRows((await download(id, { format: 'CSV' })).bytes);
      expect(rows.map((row) => row.risk_id).sort()).to.deep.equal([doomed!.id, risks.tls!.id, risks.port!.id].sort());
      expect(rows.find((row) => row.risk_id === risks.port!.id)!.accepted).to.equal('no');
    });
  });
});

describe('HTTP /v1/reports across a restart', function () {
  this.timeout(120_000);

  it('downloads a report created before the restart, in its format and another', async () => {
    const dir = tempDir();
    try {
      const first = await TestService.start({ env: LAB, dataDir: dir.path });
      const target = (await first.post('/v1/targets', { target: '127.0.0.4', label: 'Before restart' })).body.data;
      seedRisks(first.vigil.db, [{ accountId: first.accountId, targetId: target.id, title: 'Survives restarts', threatLevel: 'HIGH' }]);
      const id = (await first.post('/v1/reports', { report_format: 'PDF' })).body.data.id as string;
      await first.stop();

      const second = await TestService.start({ env: LAB, dataDir: dir.path, accountName: 'after-restart' });
      try {
        const pdf = await download(id, {}, first.apiKey, second);
        expect(pdf.status).to.equal(200);
        expect(pdfToText(pdf.bytes, 'restart')).to.include('Survives restarts');
        const page = await download(id, { format: 'HTML' }, first.apiKey, second);
        expect(page.bytes.toString()).to.include('Survives restarts');
        expect(readdirSync(join(dir.path, 'reports', id)).sort()).to.deep.equal(['report.html', 'report.pdf', 'snapshot.json.gz']);
      } finally {
        await second.stop();
      }
    } finally {
      dir.remove();
    }
  });
});

describe('OpenAPI document: report downloads', () => {
  it('documents the download content types, the 403 and the query parameters', async () => {
    const service = await TestService.start();
    try {
      const document = (await service.get('/v1/openapi.json')).body;
      const operation = document.paths['/v1/reports/{id}'].get;
      expect(Object.keys(operation.responses['200'].content)).to.deep.equal(['application/pdf', 'text/html', 'text/csv']);
      expect(operation.responses).to.have.property('403');
      expect(operation.parameters.map((parameter: { name: string }) => parameter.name)).to.include.members(['id', 'filename', 'format']);
      expect(document.paths['/v1/reports'].post.responses).to.include.keys('200', '400', '403', '404');
    } finally {
      await service.stop();
    }
  });
});
