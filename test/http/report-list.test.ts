/**
 * Listing and deleting reports over HTTP (README, API decisions): GET
 * /v1/reports with the common list behaviour, DELETE /v1/reports/{id}
 * removing the row and its files. GET /v1/reports/{id} stays the download
 * (CONTRACT.md). Responses are validated against the OpenAPI document by
 * TestService.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FileSystemReportFiles } from '../../src/store/report-files.js';
import { seedRisks } from '../support/report-data.js';
import { TestService } from '../support/test-service.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };

interface ReportItem {
  id: string;
  format: string;
  filters: { targets_filter: Record<string, string[]>; risks_filter: Record<string, string[]> };
  size: number | null;
  risk_count: number;
  matched_risks: number;
  target_count: number;
  created_at: string;
}

describe('HTTP GET /v1/reports and DELETE /v1/reports/{id}', function () {
  this.timeout(60_000);
  let service: TestService;

  beforeEach(async () => {
    service = await TestService.start({ env: LAB });
  });
  afterEach(async () => {
    await service.stop();
  });

  const reportsDir = () => join(service.settings.dataDir, 'reports');

  async function createReport(body: Record<string, unknown>, key?: string): Promise<string> {
    const response = await service.post('/v1/reports', body, { key });
    expect(response.status, response.text).to.equal(200);
    return response.body.data.id;
  }

  async function list(query: Record<string, string | number | undefined> = {}, key?: string): Promise<{ data: ReportItem[]; next_page_token?: string }> {
    const response = await service.get('/v1/reports', { query, key });
    expect(response.status, response.text).to.equal(200);
    return response.body;
  }

  it('lists the reports newest first with id, format, filters, size, counts and created_at', async () => {
    const target = await service.post('/v1/targets', { target: '127.0.0.1', tags: ['prod'] });
    seedRisks(service.vigil.db, [{ accountId: service.accountId, targetId: target.body.data.id, title: 'Open port 22/tcp', threatLevel: 'HIGH' }]);
    const first = await createReport({ report_format: 'HTML' });
    const second = await createReport({
      report_format: 'PDF',
      targets_filter: { tags: ['prod'] },
      risks_filter: { status: ['OPEN'], 'risk_definition.scan_type': [] },
    });
    const { data, next_page_token } = await list();
    expect(next_page_token).to.equal(undefined);
    expect(data.map((report) => report.id)).to.deep.equal([second, first]);
    const [pdf, html] = data as [ReportItem, ReportItem];
    expect(pdf).to.include({ format: 'PDF', risk_count: 1, matched_risks: 1, target_count: 1 });
    expect(pdf.filters).to.deep.equal({ targets_filter: { tags: ['prod'] }, risks_filter: { status: ['OPEN'] } });
    expect(html.filters).to.deep.equal({ targets_filter: {}, risks_filter: {} });
    expect(pdf.size).to.equal(statSync(join(reportsDir(), second, 'report.pdf')).size);
    expect(html.size).to.equal(statSync(join(reportsDir(), first, 'report.html')).size);
    const download = await fetch(`${service.baseUrl}/v1/reports/${first}`, { headers: { 'X-SERVICE-API-KEY': service.apiKey } });
    expect((await download.arrayBuffer()).byteLength).to.equal(html.size);
    expect(Date.parse(pdf.created_at)).to.be.at.least(Date.parse(html.created_at));
  });

  it('pages with page_size and next_page_token, filters by format in either form, and scopes to the account', async () => {
    const created: string[] = [];
    for (const format of ['HTML', 'PDF', 'HTML', 'HTML', 'PDF']) created.push(await createReport({ report_format: format }));
    const other = service.createAccount('other');
    await createReport({ report_format: 'HTML' }, other.apiKey);
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await list({ page_size: 2, page_token: token });
      expect(page.data.length).to.be.at.most(2);
      seen.push(...page.data.map((report) => report.id));
      token = page.next_page_token;
    } while (token !== undefined);
    expect(seen).to.deep.equal([...created].reverse());
    expect((await list({ filters: JSON.stringify({ format: ['PDF'] }) })).data.map((report) => report.id)).to.deep.equal([created[4], created[1]]);
    const brackets = await service.get('/v1/reports?filters[format][]=PDF');
    expect(brackets.body.data.map((report: ReportItem) => report.id)).to.deep.equal([created[4], created[1]]);
    expect((await list({}, other.apiKey)).data).to.have.length(1);
    const unknown = await service.get('/v1/reports', { query: { filters: JSON.stringify({ status: ['OPEN'] }) } });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error).to.match(/allowed keys: format/);
  });

  it('deletes a report: gone from the list and from downloads, its files removed; another account gets 404', async () => {
    const kept = await createReport({ report_format: 'HTML' });
    const doomed = await createReport({ report_format: 'HTML' });
    // A second format rendered on download: its file goes too.
    expect((await fetch(`${service.baseUrl}/v1/reports/${doomed}?format=PDF`, { headers: { 'X-SERVICE-API-KEY': service.apiKey } })).status).to.equal(200);
    expect(readdirSync(join(reportsDir(), doomed)).sort()).to.deep.equal(['report.html', 'report.pdf', 'snapshot.json.gz']);

    const other = service.createAccount('other');
    const refused = await service.delete(`/v1/reports/${doomed}`, { key: other.apiKey });
    expect(refused.status).to.equal(404);
    expect(existsSync(join(reportsDir(), doomed))).to.equal(true);

    const response = await service.delete(`/v1/reports/${doomed}`);
    expect(response.status, response.text).to.equal(200);
    expect(response.body).to.deep.equal({ data: { id: doomed, deleted: true } });
    expect(existsSync(join(reportsDir(), doomed))).to.equal(false);
    expect((await list()).data.map((report) => report.id)).to.deep.equal([kept]);
    expect((await service.get(`/v1/reports/${doomed}`)).status).to.equal(404);
    expect((await service.delete(`/v1/reports/${doomed}`)).status).to.equal(404);
    expect(existsSync(join(reportsDir(), kept, 'report.html'))).to.equal(true);
  });

  it('keeps GET /v1/reports/{id} the download and refuses ids that are not reports with 404', async () => {
    const id = await createReport({ report_format: 'HTML' });
    const download = await fetch(`${service.baseUrl}/v1/reports/${id}`, { headers: { 'X-SERVICE-API-KEY': service.apiKey } });
    expect(download.headers.get('content-type')).to.match(/text\/html/);
    for (const id of ['nope', '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17', 'a%2F..']) expect((await service.delete(`/v1/reports/${id}`)).status, id).to.equal(404);
    expect(existsSync(join(reportsDir(), id, 'report.html'))).to.equal(true);
  });

  it('never removes more than one report folder, whatever id it is handed', async () => {
    const files = new FileSystemReportFiles(reportsDir());
    for (const id of ['..', '.', '', 'a/..', '../reports']) {
      let refused = false;
      await files.remove(id).catch(() => (refused = true));
      expect(refused, JSON.stringify(id)).to.equal(true);
    }
    expect(existsSync(service.settings.dataDir)).to.equal(true);
  });

  it('answers 401 without an API key', async () => {
    expect((await service.get('/v1/reports', { key: null })).status).to.equal(401);
    expect((await service.delete('/v1/reports/x', { key: null })).status).to.equal(401);
  });
});
