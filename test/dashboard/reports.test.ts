/**
 * The dashboard's Reports page over HTTP against the real service: the
 * form sends the API's filters, the list offers every format the account
 * may download (CSV only with csv_export), downloads stream the file, and
 * another account's report is a 404 page.
 */
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { DashboardClient } from '../support/dashboard-client.js';
import { HOSTILE, seedRisks } from '../support/report-data.js';
import { TestService } from '../support/test-service.js';

describe('dashboard: reports', function () {
  this.timeout(60_000);
  let service: TestService;
  let auditor: { apiKey: string; account: { id: string } };
  let user: DashboardClient;

  before(async () => {
    service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' } });
    auditor = service.createAccount('auditor', { features: ['csv_export'] });
    const web = (await service.post('/v1/targets', { target: '127.0.0.5', label: 'Web', tags: ['prod'] }, { key: auditor.apiKey })).body.data;
    const lab = (await service.post('/v1/targets', { target: '127.0.0.6', label: 'Lab', tags: ['lab'] }, { key: auditor.apiKey })).body.data;
    seedRisks(service.vigil.db, [
      { accountId: auditor.account.id, targetId: web.id, title: HOSTILE.title, threatLevel: 'HIGH' },
      { accountId: auditor.account.id, targetId: web.id, title: 'Open port 80/tcp', threatLevel: 'INFO', scanType: 'NMAP' },
      { accountId: auditor.account.id, targetId: lab.id, title: 'Lab finding', threatLevel: 'HIGH', status: 'CLOSED' },
    ]);
    user = await new DashboardClient(service.baseUrl).signedIn(auditor.apiKey);
  });
  after(async () => {
    await service.stop();
  });

  const reportLinks = (text: string) =>
    [...text.matchAll(/href="(\/dashboard\/reports\/[^"]+\/download\?format=(\w+))"/g)].map((match) => ({
      path: match[1]!.replace(/&amp;/g, '&'),
      format: match[2]!,
    }));

  it('links the Reports page from the navigation and shows the form', async () => {
    const page = await user.get('/dashboard/reports');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<a href="/dashboard/reports" aria-current="page">Reports</a>');
    expect(page.text).to.include('<option value="CSV">CSV</option>');
    expect(page.text).to.include('No reports yet.');
  });

  it('creates a report with the filters and downloads it in every format', async () => {
    const created = await user.post('/dashboard/reports', { report_format: 'HTML', tags: 'prod\n', threat_level: 'HIGH', status: 'OPEN' });
    expect(created.status, created.text).to.equal(303);
    expect(created.location).to.equal('/dashboard/reports?notice=report-created');
    const page = await user.get(created.location!);
    expect(page.text).to.include('Report created.');
    expect(page.text).to.include('Targets tags: prod; Risks status: OPEN; Risks risk_definition.threat_level: HIGH');
    const links = reportLinks(page.text);
    expect(links.map((link) => link.format)).to.deep.equal(['PDF', 'HTML', 'CSV']);

    const html = await user.get(links.find((link) => link.format === 'HTML')!.path);
    expect(html.status).to.equal(200);
    expect(html.headers.get('content-disposition')).to.match(/^attachment; filename="vigil-report-[\d-]+\.html"$/);
    expect(html.text).to.include('&lt;script&gt;alert(&quot;title&quot;)');
    expect(html.text).to.not.include('Lab finding');
    const csv = await user.get(links.find((link) => link.format === 'CSV')!.path);
    const rows = parse(csv.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => row.title)).to.deep.equal([HOSTILE.title]);
    const pdf = await user.get(links.find((link) => link.format === 'PDF')!.path);
    expect(pdf.headers.get('content-type')).to.equal('application/pdf');
    expect(pdf.text.startsWith('%PDF-')).to.equal(true);
  });

  it('shows the form again with the error for a filter the service refuses', async () => {
    const refused = await user.post('/dashboard/reports', { report_format: 'PDF', label: 'x'.repeat(2049) });
    expect(refused.status).to.equal(400);
    expect(refused.text).to.match(/role="alert">Targets_filter.label values may be at most 2048 characters/);
  });

  it("offers no CSV to an account without csv_export, and 404s another account's report", async () => {
    const other = await new DashboardClient(service.baseUrl).signedIn(service.apiKey);
    const page = await other.get('/dashboard/reports');
    expect(page.text).to.not.include('<option value="CSV">');
    expect((await other.post('/dashboard/reports', { report_format: 'CSV' })).status).to.equal(403);
    const [link] = reportLinks((await user.get('/dashboard/reports')).text);
    expect((await other.get(link!.path)).status).to.equal(404);
  });
});
