/**
 * The pages a person runs Vigil from, over HTTP against the real service:
 * the overview, targets, scans and scheduled scans. Numbers and lists are
 * compared with what /v1 answers for the same account; every action goes
 * through the service the API uses, so its refusals appear in the forms.
 * Another account's ids are 404s that change nothing; every POST needs the
 * session's CSRF token; hostile text is shown as text.
 */
import { expect } from 'chai';
import { weekStartOf } from '../../src/domain/trends/weekly-changes.js';
import { DashboardClient, importNmapReport, nmapReport } from '../support/dashboard-client.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';
import { receiveEvents } from '../support/event-receiver.js';

const HOSTILE = `<script>alert("x")</script>' onmouseover="alert(1)`;
const HOSTILE_ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&quot;alert(1)';
const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8', VIGIL_EMBEDDED_SCANNERS: 'local' };
const UUID = '[0-9a-f-]{36}';
const nowhere = (n: number) => `host-${n}.invalid-tld-for-tests.example`;

/** The ids linked from a page under `prefix`, in page order, without repeats. */
const idsIn = (page: string, prefix: string) => [...new Set([...page.matchAll(new RegExp(`href="${prefix}/(${UUID})"`, 'g'))].map((match) => match[1]!))];
const ENTITIES: Record<string, string> = { '&#39;': "'", '&quot;': '"', '&lt;': '<', '&gt;': '>', '&amp;': '&' };
/** The text of the alert on a page (a refusal), entities decoded. */
const alertOf = (page: string) => /role="alert">([^<]*)</.exec(page)?.[1]?.replace(/&#39;|&quot;|&lt;|&gt;|&amp;/g, (entity) => ENTITIES[entity]!);
const noScript = (page: string) => expect(page).to.not.match(/<script|onmouseover="/);

let service: TestService;
let user: DashboardClient;
let imported: { scanId: string; targetId: string };
let lab: { id: string };

const api = {
  targets: async (query: Record<string, string> = {}) =>
    (await service.get('/v1/targets', { query: { page_size: 500, ...query } })).body.data as Array<{ id: string; target: string }>,
  risks: async (filters: Record<string, string[]> = {}) =>
    (await service.get('/v1/risks', { query: { page_size: 500, filters: JSON.stringify(filters) } })).body.data,
  scan: async (id: string, key?: string) => (await service.get(`/v1/scans/${id}`, key === undefined ? {} : { key })).body.data,
};

before(async function () {
  this.timeout(60_000);
  service = await TestService.start({ env: LAB });
  user = await new DashboardClient(service.baseUrl).signedIn(service.apiKey);
  // Events are stored only for their receivers: with one, "no event" below means none was made.
  receiveEvents(service.vigil.webhookEndpoints, service.accountId);
  const summary = await importNmapReport(
    service,
    service.apiKey,
    nmapReport('93.184.216.34', [
      {
        port: 22,
        product: 'OpenSSH 7.4',
        cves: [
          { id: 'CVE-2024-6387', cvss: '9.8' },
          { id: 'CVE-2018-15919', cvss: '5.0' },
        ],
      },
      { port: 80 },
      { port: 443 },
    ]),
  );
  imported = { scanId: summary.scan_id, targetId: (await api.targets({ filters: JSON.stringify({ target: ['93.184.216.34'] }) }))[0]!.id };
  lab = (await service.post('/v1/targets', { target: '127.0.0.1', label: HOSTILE, tags: ['lab'] })).body.data;
  for (let n = 1; n <= 30; n++) expect((await service.post('/v1/targets', { target: `site-${n}.example.com`, tags: ['bulk'] })).status).to.equal(200);
});
after(async () => {
  await service?.stop();
});

describe('dashboard: overview', () => {
  it('is the first page, with open risks by threat level as the API counts them, as a chart and a table', async () => {
    const page = await user.get('/dashboard');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<h1>Overview</h1>');
    expect(page.text).to.match(/<a href="\/dashboard" aria-current="page">Overview<\/a>/);
    const open = await api.risks({ status: ['OPEN'] });
    for (const level of ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO']) {
      const count = open.filter((risk: { risk_definition: { threat_level: string } }) => risk.risk_definition.threat_level === level).length;
      const name = level.charAt(0) + level.slice(1).toLowerCase();
      expect(page.text, level).to.match(
        new RegExp(`<th scope="row">${name}</th><td><a href="/dashboard/risks\\?threat_level=${level}&amp;status=OPEN&amp;accepted=no">${count}<`),
      );
    }
    expect(page.text).to.include(`<desc id="open-risks-chart-desc">${open.length} open risks: 1 critical, 0 high, 1 medium, 0 low, 3 info.</desc>`);
    expect(page.text.match(/<svg class="chart" role="img"/g)).to.have.length(2);
  });

  it('counts risks the scans opened this week, and targets by grade', async () => {
    const page = await user.get('/dashboard');
    const thisWeek = weekStartOf(new Date()).toISOString().slice(0, 10);
    const newOpen = (await api.scan(imported.scanId)).risks.new_open.length;
    expect(newOpen).to.equal(5);
    expect(page.text).to.include(`<tr><th scope="row"><time datetime="${thisWeek}">${thisWeek}</time></th><td>5</td><td>0</td></tr>`);
    expect(page.text.match(/<tr><th scope="row"><time datetime="\d{4}-\d\d-\d\d">/g)).to.have.length(12);
    const grades = Object.fromEntries(
      [...page.text.matchAll(/<span class="grade grade-([a-f])">[A-F]<\/span><span class="visually-hidden"> grade<\/span><\/dt><dd>(\d+)<\/dd>/g)].map(
        (match) => [match[1], Number(match[2])],
      ),
    );
    const targets = await api.targets();
    // One critical and one medium: 100 - 40 - 7 = 53, C. The others were never scanned: no grade, not A.
    expect(grades).to.deep.equal({ a: 0, b: 0, c: 1, d: 0, f: 0 });
    expect(page.text).to.include(`<dt><span class="empty">not scanned yet</span></dt><dd>${targets.length - 1}</dd>`);
  });

  it('lists the latest scans and what runs next, soonest first, without disabled schedules', async () => {
    const later = (
      await service.post('/v1/scans/scheduled', {
        name: `later ${HOSTILE}`,
        schedule: 'WEEKLY',
        scan_types: ['NMAP'],
        filter_set: { tags: ['lab'] },
        email_notification: 'NEVER',
        start_time: '2099-02-01T09:00:00Z',
      })
    ).body.data;
    const sooner = (
      await service.post('/v1/scans/scheduled', {
        name: 'sooner',
        schedule: 'DAILY',
        scan_types: ['NMAP'],
        filter_set: { tags: ['lab'] },
        email_notification: 'NEVER',
        start_time: '2099-01-01T09:00:00Z',
      })
    ).body.data;
    const off = (
      await service.post('/v1/scans/scheduled', {
        name: 'off',
        schedule: 'DAILY',
        scan_types: ['NMAP'],
        filter_set: { tags: ['lab'] },
        email_notification: 'NEVER',
        start_time: '2098-01-01T09:00:00Z',
        disabled: true,
      })
    ).body.data;
    const page = await user.get('/dashboard');
    expect(idsIn(page.text, '/dashboard/scheduled-scans')).to.deep.equal([sooner.id, later.id]);
    expect(page.text).to.not.include(off.id);
    expect(page.text).to.include(`later ${HOSTILE_ESCAPED}`);
    expect(idsIn(page.text, '/dashboard/scans')).to.deep.equal([imported.scanId]);
    noScript(page.text);
    for (const schedule of [later, sooner, off]) await service.delete(`/v1/scans/scheduled/${schedule.id}`);
  });
});

describe('dashboard: targets', () => {
  it("lists 25 targets a page in the API's order, with a next page that continues", async () => {
    const all = (await api.targets()).map((target) => target.id);
    expect(all).to.have.length(32);
    const first = await user.get('/dashboard/targets');
    expect(idsIn(first.text, '/dashboard/targets')).to.deep.equal(all.slice(0, 25));
    const next = /href="(\/dashboard\/targets\?page_token=[^"]+)">Next page</.exec(first.text)![1]!.replace(/&amp;/g, '&');
    const second = await user.get(next);
    expect(idsIn(second.text, '/dashboard/targets')).to.deep.equal(all.slice(25));
    expect(second.text).to.include('First page');
  });

  it('shows health, open risks by level, tags, origin and last scan per target', async () => {
    const page = await user.get('/dashboard/targets?q=93.184');
    expect(idsIn(page.text, '/dashboard/targets')).to.deep.equal([imported.targetId]);
    expect(page.text).to.include('<span class="grade grade-c">C</span> 53');
    expect(page.text).to.include('<span class="badge badge-critical">1 critical</span>');
    expect(page.text).to.include('<span class="badge badge-medium">1 medium</span>');
    expect(page.text).to.include('<span class="badge badge-info">3 info</span>');
    expect(page.text).to.include('<td>UPLOADED_RESULTS</td>');
    expect(page.text).to.match(/<td><time datetime="[^"]+">/);
  });

  it('filters by tag and by text in the address or label, as the API selects them', async () => {
    expect(idsIn((await user.get('/dashboard/targets?tag=LAB')).text, '/dashboard/targets')).to.deep.equal([lab.id]);
    const bulk = await api.targets({ filters: JSON.stringify({ tags: ['bulk'] }) });
    const withOne = bulk.filter((target) => target.target.includes('site-1')).map((target) => target.id);
    expect(withOne).to.have.length(11); // site-1 and site-10 to site-19
    expect(idsIn((await user.get('/dashboard/targets?tag=bulk&q=SITE-1')).text, '/dashboard/targets')).to.deep.equal(withOne);
    expect(idsIn((await user.get('/dashboard/targets?q=script')).text, '/dashboard/targets')).to.deep.equal([lab.id]); // the label
    expect((await user.get('/dashboard/targets?q=nothing-like-this')).text).to.include('No targets match these filters.');
  });

  it("shows a target's risks linked to their pages and its scans, and each risk links back to its target and scan", async () => {
    const page = await user.get(`/dashboard/targets/${imported.targetId}`);
    const risks = (await api.risks({ target_id: [imported.targetId] })).map((risk: { id: string }) => risk.id);
    expect(idsIn(page.text, '/dashboard/risks')).to.deep.equal(risks);
    expect(idsIn(page.text, '/dashboard/scans')).to.deep.equal([imported.scanId]);
    const risk = await user.get(`/dashboard/risks/${risks[0]}`);
    expect(idsIn(risk.text, '/dashboard/targets')).to.deep.equal([imported.targetId]);
    expect(idsIn(risk.text, '/dashboard/scans')).to.deep.equal([imported.scanId]);
  });

  it("edits label and tags through the API's rules, showing their refusal in the form", async () => {
    const saved = await user.post(`/dashboard/targets/${lab.id}/edit`, { label: `lab box ${HOSTILE}`, tags: 'Lab, Loopback,, lab' });
    expect(saved.location).to.equal(`/dashboard/targets/${lab.id}?notice=target-saved`);
    const target = (await service.get(`/v1/targets/${lab.id}`)).body.data;
    expect(target).to.deep.include({ label: `lab box ${HOSTILE}`, tags: ['lab', 'loopback'] });
    const page = await user.get(saved.location!);
    expect(page.text).to.include(`lab box ${HOSTILE_ESCAPED}`);
    noScript(page.text);

    const tooMany = await user.post(`/dashboard/targets/${lab.id}/edit`, { label: 'x', tags: Array.from({ length: 11 }, (_, n) => `t${n}`).join(',') });
    expect(tooMany.status).to.equal(400);
    expect(alertOf(tooMany.text)).to.match(/^Tags /);
    expect(tooMany.text).to.include('value="t0,t1,t2');
    expect((await service.get(`/v1/targets/${lab.id}`)).body.data.tags).to.deep.equal(['lab', 'loopback']);

    const uploaded = await user.post(`/dashboard/targets/${imported.targetId}/edit`, { label: 'mine now', tags: '' });
    expect(uploaded.status).to.equal(400);
    expect(alertOf(uploaded.text)).to.equal("Target '93.184.216.34' was created from uploaded scan results and cannot be updated.");
  });

  it('deletes a manual target and refuses to delete one created from uploads, saying why', async () => {
    const refused = await user.post(`/dashboard/targets/${imported.targetId}/delete`);
    expect(refused.status).to.equal(400);
    expect(alertOf(refused.text)).to.match(/was created from uploaded scan results and cannot be deleted/);
    const doomed = (await api.targets({ filters: JSON.stringify({ target: ['site-30.example.com'] }) }))[0]!;
    const deleted = await user.post(`/dashboard/targets/${doomed.id}/delete`);
    expect(deleted.location).to.equal('/dashboard/targets?notice=target-deleted');
    expect((await service.get(`/v1/targets/${doomed.id}`)).status).to.equal(404);
    expect((await user.get(`/dashboard/targets/${doomed.id}`)).status).to.equal(404);
  });
});

describe('dashboard: scans', () => {
  let failedId: string;

  it('starts a scan of the chosen type from a target, and its page says in words why it failed', async function () {
    this.timeout(60_000);
    const started = await user.post(`/dashboard/targets/${lab.id}/scan`, { type: 'SSLYZE' });
    expect(started.status, started.text).to.equal(303);
    failedId = new RegExp(`^/dashboard/scans/(${UUID})\\?notice=scan-started$`).exec(started.location!)![1]!;
    const scan = await waitFor(
      () => api.scan(failedId),
      (value) => value.state === 'FAILED',
      'the SSLYZE scan to fail',
    );
    const condition = scan.conditions.find((entry: { status: string; reason: string }) => entry.reason === 'ScannerNotInstalled');
    expect(condition, JSON.stringify(scan.conditions)).to.not.equal(undefined);
    const page = await user.get(`/dashboard/scans/${failedId}`);
    expect(page.text).to.include('The scan failed. The conditions below say why and what to change.');
    expect(page.text).to.include('<code>ScannerNotInstalled</code>');
    const sentence = condition.message.charAt(0).toUpperCase() + condition.message.slice(1);
    expect(page.text.replace(/&#39;/g, "'").replace(/&quot;/g, '"')).to.include(sentence.replace(/[.]?$/, ''));
    expect(page.text).to.include('Delete scan');
  });

  it("refuses a scan type the plan does not include, with the API's sentence on the target's page", async () => {
    const refused = await user.post(`/dashboard/targets/${lab.id}/scan`, { type: 'OWASP_ZAP_ACTIVE' });
    expect(refused.status).to.equal(400);
    expect(alertOf(refused.text)).to.equal('OWASP_ZAP_ACTIVE scans need a paid plan; use OWASP_ZAP for a passive web scan.');
    expect(refused.text).to.match(/<option value="OWASP_ZAP_ACTIVE" selected>/);
  });

  it('shows skipped targets with their reasons', async function () {
    this.timeout(60_000);
    const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: [nowhere(1)] })).body.data;
    const done = await waitFor(
      () => api.scan(scan.id),
      (value) => ['SUCCEEDED', 'FAILED'].includes(value.state),
      'the scan of a name that does not resolve to end',
    );
    expect(done.skipped_targets).to.have.length(1);
    const page = await user.get(`/dashboard/scans/${scan.id}`);
    expect(page.text).to.include(`>${nowhere(1)}</a></th><td><span class="badge badge-failed">Skipped</span> DNS lookup failed`);
  });

  it('filters by state and type as GET /v1/scans does, newest first', async () => {
    const apiIds = async (filters: Record<string, string[]>) =>
      (await service.get('/v1/scans', { query: { filters: JSON.stringify(filters) } })).body.data.map((scan: { id: string }) => scan.id);
    const all = await user.get('/dashboard/scans');
    expect(idsIn(all.text, '/dashboard/scans')).to.deep.equal(await apiIds({}));
    expect(idsIn((await user.get('/dashboard/scans?state=FAILED&type=SSLYZE')).text, '/dashboard/scans')).to.deep.equal([failedId]);
    expect(idsIn((await user.get('/dashboard/scans?state=SUCCEEDED')).text, '/dashboard/scans')).to.deep.equal(await apiIds({ state: ['SUCCEEDED'] }));
    expect((await user.get('/dashboard/scans?state=<b>&type=NOPE')).status).to.equal(200);
    expect(all.text).to.match(/<td>5 \/ 0 \/ 0<\/td>/); // the import: five new risks
  });

  it('downloads a result file with the same bytes and headers as GET /v1/results/{id}', async () => {
    const scan = await api.scan(imported.scanId);
    const resultId = scan.results[0].result_id;
    const page = await user.get(`/dashboard/scans/${imported.scanId}`);
    expect(page.text).to.match(new RegExp(`<a href="/dashboard/results/${resultId}" download>[^<]+</a>`));
    const cookie = [...user.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const viaDashboard = await fetch(`${service.baseUrl}/dashboard/results/${resultId}`, { headers: { Cookie: cookie } });
    const viaApi = await service.request('GET', `/v1/results/${resultId}`);
    expect(viaDashboard.status).to.equal(200);
    for (const header of ['content-type', 'content-length', 'content-disposition'])
      expect(viaDashboard.headers.get(header), header).to.equal(viaApi.headers.get(header));
    expect(await viaDashboard.text()).to.equal(viaApi.text);
    expect((await fetch(`${service.baseUrl}/dashboard/results/${resultId}`, { redirect: 'manual' })).status, 'signed out').to.equal(303);
  });

  it("offers the scan's PDF on its page, downloaded as GET /v1/results/{id} serves it", async () => {
    const scan = await api.scan(imported.scanId);
    const pdf = scan.results.find((result: { content_type: string }) => result.content_type === 'application/pdf');
    const page = await user.get(`/dashboard/scans/${imported.scanId}`);
    expect(page.text).to.match(new RegExp(`<a href="/dashboard/results/${pdf.result_id}" download>PDF of this scan</a>`));
    const cookie = [...user.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const viaDashboard = await fetch(`${service.baseUrl}/dashboard/results/${pdf.result_id}`, { headers: { Cookie: cookie } });
    expect(viaDashboard.status).to.equal(200);
    expect(viaDashboard.headers.get('content-type')).to.equal('application/pdf');
    const bytes = Buffer.from(await viaDashboard.arrayBuffer());
    const viaApi = await fetch(`${service.baseUrl}/v1/results/${pdf.result_id}`, { headers: { 'X-SERVICE-API-KEY': service.apiKey } });
    expect(Buffer.from(await viaApi.arrayBuffer()).equals(bytes)).to.equal(true);
    expect(bytes.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
  });

  it('deletes a finished scan', async () => {
    const deleted = await user.post(`/dashboard/scans/${failedId}/delete`);
    expect(deleted.location).to.equal('/dashboard/scans?notice=scan-deleted');
    expect((await service.get(`/v1/scans/${failedId}`)).status).to.equal(404);
  });
});

describe('dashboard: scheduled scans', () => {
  const form = (fields: Record<string, string> = {}) => ({
    name: `nightly ${HOSTILE}`,
    schedule: 'DAILY',
    scan_types: 'NMAP',
    target_ids: lab.id,
    tags: 'bulk',
    start_time: '2099-03-01T02:00:00Z',
    time_zone: 'Europe/Berlin',
    schedule_dates: '',
    email_notification: 'ON_CHANGES',
    email_to: 'sec@example.com, ops@example.com',
    ...fields,
  });
  let id: string;

  it('creates a schedule from the form, as POST /v1/scans/scheduled would', async () => {
    const created = await user.post('/dashboard/scheduled-scans', form());
    expect(created.status, created.text).to.equal(303);
    id = new RegExp(`^/dashboard/scheduled-scans/(${UUID})\\?notice=schedule-created$`).exec(created.location!)![1]!;
    const saved = (await service.get(`/v1/scans/scheduled/${id}`)).body.data;
    expect(saved).to.deep.include({
      name: `nightly ${HOSTILE}`,
      schedule: 'DAILY',
      email_notification: 'ON_CHANGES',
      time_zone: 'Europe/Berlin',
      next_run: '2099-03-01T02:00:00.000Z',
      disabled: false,
    });
    expect(saved.targets_filter).to.deep.equal({ target_ids: [lab.id], tags: ['bulk'] });
    expect(saved.email_to).to.deep.equal(['sec@example.com', 'ops@example.com']);
    const list = await user.get('/dashboard/scheduled-scans');
    expect(idsIn(list.text, '/dashboard/scheduled-scans')).to.deep.equal([id]);
    expect(list.text).to.include(`nightly ${HOSTILE_ESCAPED}`);
    expect(list.text).to.include('When risks changed<br><span class="hint">sec@example.com, ops@example.com</span>');
    noScript(list.text);
  });

  it('takes several scan types from the checkboxes', async () => {
    const cookie = [...user.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const body = new URLSearchParams({ ...form({ name: 'two types' }), csrf: user.csrf! });
    body.append('scan_types', 'SSLYZE');
    const response = await fetch(`${service.baseUrl}/dashboard/scheduled-scans`, {
      method: 'POST',
      body,
      redirect: 'manual',
      headers: { Cookie: cookie, Origin: service.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).to.equal(303);
    const created = /([0-9a-f-]{36})\?notice/.exec(response.headers.get('location')!)![1]!;
    expect((await service.get(`/v1/scans/scheduled/${created}`)).body.data.scan_types).to.deep.equal(['NMAP', 'SSLYZE']);
    await service.delete(`/v1/scans/scheduled/${created}`);
  });

  it("shows the service's refusal in the form and keeps what was typed", async () => {
    const custom = await user.post('/dashboard/scheduled-scans', form({ schedule: 'CUSTOM', name: 'custom without dates' }));
    expect(custom.status).to.equal(400);
    expect(alertOf(custom.text)).to.equal('Schedule_dates must list 1 to 100 date-times when schedule is CUSTOM; it lists 0.');
    expect(custom.text).to.include('value="custom without dates"');
    expect(custom.text).to.match(/<option value="CUSTOM" selected>/);
    const email = await user.post('/dashboard/scheduled-scans', form({ email_to: 'not-an-address' }));
    expect(alertOf(email.text)).to.equal("Email_to item 'not-an-address' is not a valid e-mail address.");
    const nothing = await user.post('/dashboard/scheduled-scans', form({ target_ids: '', tags: '' }));
    expect(alertOf(nothing.text)).to.equal('Filter_set must list at least one target id in target_ids or one tag in tags.');
    const zone = await user.post('/dashboard/scheduled-scans', form({ time_zone: 'Mars/Olympus' }));
    expect(alertOf(zone.text)).to.match(/^Time_zone 'Mars\/Olympus' is not a valid IANA time zone/);
    expect((await service.get('/v1/scans/scheduled')).body.data.map((schedule: { id: string }) => schedule.id)).to.deep.equal([id]);
  });

  it('edits a schedule: its next run is recalculated, an unchanged start time is kept', async () => {
    const saved = await user.post(
      `/dashboard/scheduled-scans/${id}`,
      form({ schedule: 'WEEKLY', name: 'weekly now', email_notification: 'NEVER', email_to: '' }),
    );
    expect(saved.location).to.equal(`/dashboard/scheduled-scans/${id}?notice=schedule-saved`);
    const schedule = (await service.get(`/v1/scans/scheduled/${id}`)).body.data;
    expect(schedule).to.deep.include({
      name: 'weekly now',
      schedule: 'WEEKLY',
      email_notification: 'NEVER',
      start_time: '2099-03-01T02:00:00Z',
      next_run: '2099-03-01T02:00:00.000Z',
    });
    expect(schedule.email_to).to.deep.equal([]);
    const page = await user.get(saved.location!);
    expect(page.text).to.include('value="weekly now"');
    expect(page.text).to.include('Scheduled scan saved.');
  });

  it('disables and enables a schedule, keeping its settings', async () => {
    expect((await user.post(`/dashboard/scheduled-scans/${id}/disable`)).location).to.equal(`/dashboard/scheduled-scans/${id}?notice=schedule-disabled`);
    expect((await service.get(`/v1/scans/scheduled/${id}`)).body.data).to.deep.include({
      disabled: true,
      next_run: null,
      name: 'weekly now',
      schedule: 'WEEKLY',
    });
    expect((await user.get('/dashboard/scheduled-scans')).text).to.include('badge-revoked">Disabled</span>');
    expect((await user.post(`/dashboard/scheduled-scans/${id}/enable`)).location).to.equal(`/dashboard/scheduled-scans/${id}?notice=schedule-enabled`);
    const enabled = (await service.get(`/v1/scans/scheduled/${id}`)).body.data;
    expect(enabled).to.deep.include({ disabled: false, name: 'weekly now' });
    expect(enabled.next_run).to.be.a('string');
  });

  it('deletes a schedule', async () => {
    expect((await user.post(`/dashboard/scheduled-scans/${id}/delete`)).location).to.equal('/dashboard/scheduled-scans?notice=schedule-deleted');
    expect((await service.get(`/v1/scans/scheduled/${id}`)).status).to.equal(404);
    expect((await user.get(`/dashboard/scheduled-scans/${id}`)).status).to.equal(404);
  });

  it('links a schedule to the scans its runs started, and each scan back to it', async function () {
    this.timeout(60_000);
    const once = await user.post(
      '/dashboard/scheduled-scans',
      form({ name: 'now', schedule: 'ONCE', start_time: '', time_zone: '', scan_types: 'SSLYZE', target_ids: '', tags: 'lab' }),
    );
    const onceId = new RegExp(`/dashboard/scheduled-scans/(${UUID})\\?`).exec(once.location!)![1]!;
    const started = await waitFor(
      async () =>
        (await service.get('/v1/scans', { query: { filters: JSON.stringify({ scheduled_by: [onceId] }) } })).body.data.map((scan: { id: string }) => scan.id),
      (ids: string[]) => ids.length > 0,
      'the run to start its scan',
    );
    const schedulePage = await user.get(`/dashboard/scheduled-scans/${onceId}`);
    expect(schedulePage.text).to.include(`<a href="/dashboard/scans?scheduled_by=${onceId}">Scans it started</a>`);
    const list = await user.get(`/dashboard/scans?scheduled_by=${onceId}`);
    expect(idsIn(list.text, '/dashboard/scans')).to.deep.equal(started);
    expect(list.text).to.include(`<input type="hidden" name="scheduled_by" value="${onceId}">`);
    expect((await user.get(`/dashboard/scans/${started[0]}`)).text).to.include(`<a href="/dashboard/scheduled-scans/${onceId}">a scheduled scan</a>`);
    await service.delete(`/v1/scans/scheduled/${onceId}`);
  });

  it("prefills the target when opened from a target's page", async () => {
    const page = await user.get(`/dashboard/targets/${lab.id}`);
    expect(page.text).to.include(`href="/dashboard/scheduled-scans/new?target_ids=${lab.id}"`);
    expect((await user.get(`/dashboard/scheduled-scans/new?target_ids=${lab.id}`)).text).to.match(
      new RegExp(`<textarea id="field-target_ids" name="target_ids"[^>]*>${lab.id}</textarea>`),
    );
  });
});

describe("dashboard: another account's targets, scans, results and schedules", () => {
  it('are 404s that change nothing', async () => {
    const other = service.createAccount('other-tenant');
    receiveEvents(service.vigil.webhookEndpoints, other.account.id);
    const summary = await importNmapReport(service, other.apiKey, nmapReport('93.184.216.40', [{ port: 25 }]));
    const theirScan = await api.scan(summary.scan_id, other.apiKey);
    const theirTarget = (await service.post('/v1/targets', { target: 'theirs.example.com', label: 'theirs' }, { key: other.apiKey })).body.data;
    const theirSchedule = (
      await service.post(
        '/v1/scans/scheduled',
        {
          name: 'theirs',
          schedule: 'DAILY',
          scan_types: ['NMAP'],
          filter_set: { target_ids: [theirTarget.id] },
          email_notification: 'NEVER',
          start_time: '2099-01-01T00:00:00Z',
        },
        { key: other.apiKey },
      )
    ).body.data;
    const events = () => (service.vigil.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    const before = { events: events(), scans: (await service.get('/v1/scans')).body.data.length };

    const attempts = [
      await user.get(`/dashboard/targets/${theirTarget.id}`),
      await user.post(`/dashboard/targets/${theirTarget.id}/edit`, { label: 'mine', tags: '' }),
      await user.post(`/dashboard/targets/${theirTarget.id}/scan`, { type: 'NMAP' }),
      await user.post(`/dashboard/targets/${theirTarget.id}/delete`),
      await user.get(`/dashboard/scans/${theirScan.id}`),
      await user.post(`/dashboard/scans/${theirScan.id}/stop`),
      await user.post(`/dashboard/scans/${theirScan.id}/delete`),
      await user.get(`/dashboard/results/${theirScan.results[0].result_id}`),
      await user.get(`/dashboard/scheduled-scans/${theirSchedule.id}`),
      await user.post(`/dashboard/scheduled-scans/${theirSchedule.id}`, { schedule: 'WEEKLY', scan_types: 'NMAP', tags: 'x', email_notification: 'NEVER' }),
      await user.post(`/dashboard/scheduled-scans/${theirSchedule.id}/disable`),
      await user.post(`/dashboard/scheduled-scans/${theirSchedule.id}/enable`),
      await user.post(`/dashboard/scheduled-scans/${theirSchedule.id}/delete`),
    ];
    expect(attempts.map((response) => response.status)).to.deep.equal(Array(attempts.length).fill(404));
    for (const response of attempts) expect(response.text).to.include('There is nothing here');
    expect((await service.get(`/v1/targets/${theirTarget.id}`, { key: other.apiKey })).body.data).to.deep.include({ label: 'theirs' });
    expect(await api.scan(theirScan.id, other.apiKey)).to.deep.equal(theirScan);
    expect((await service.get(`/v1/scans/scheduled/${theirSchedule.id}`, { key: other.apiKey })).body.data).to.deep.equal(theirSchedule);
    expect(events()).to.equal(before.events);
    expect((await service.get('/v1/scans')).body.data).to.have.length(before.scans);
    for (const path of ['/dashboard', '/dashboard/targets', '/dashboard/scans', '/dashboard/scheduled-scans']) {
      const page = (await user.get(path)).text;
      for (const theirs of [theirTarget.id, theirScan.id, theirSchedule.id]) expect(page, path).to.not.include(theirs);
    }
  });
});

describe("dashboard: every new form needs the session's CSRF token and the service's origin", () => {
  it('refuses posts without the token or from another site, and changes nothing', async () => {
    const schedule = (
      await service.post('/v1/scans/scheduled', {
        name: 'guarded',
        schedule: 'DAILY',
        scan_types: ['NMAP'],
        filter_set: { tags: ['lab'] },
        email_notification: 'NEVER',
        start_time: '2099-01-01T00:00:00Z',
      })
    ).body.data;
    const target = (await service.post('/v1/targets', { target: 'guarded.example.com', label: 'guarded' })).body.data;
    const events = () => (service.vigil.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    const before = { events: events(), scans: (await service.get('/v1/scans')).body.data.length };
    const posts: Array<[string, Record<string, string>]> = [
      [`/dashboard/targets/${target.id}/edit`, { label: 'forged', tags: '' }],
      [`/dashboard/targets/${target.id}/scan`, { type: 'NMAP' }],
      [`/dashboard/targets/${target.id}/delete`, {}],
      [`/dashboard/scans/${imported.scanId}/stop`, {}],
      [`/dashboard/scans/${imported.scanId}/delete`, {}],
      ['/dashboard/scheduled-scans', { schedule: 'DAILY', scan_types: 'NMAP', tags: 'lab', email_notification: 'NEVER' }],
      [`/dashboard/scheduled-scans/${schedule.id}`, { name: 'forged', schedule: 'WEEKLY', scan_types: 'NMAP', tags: 'lab', email_notification: 'NEVER' }],
      [`/dashboard/scheduled-scans/${schedule.id}/disable`, {}],
      [`/dashboard/scheduled-scans/${schedule.id}/enable`, {}],
      [`/dashboard/scheduled-scans/${schedule.id}/delete`, {}],
    ];
    for (const [path, fields] of posts) {
      expect((await user.post(path, fields, { csrf: null })).status, `${path} without a token`).to.equal(403);
      expect((await user.post(path, fields, { csrf: 'forged-token' })).status, `${path} with a wrong token`).to.equal(403);
      expect((await user.post(path, fields, { origin: 'https://evil.example' })).status, `${path} from another site`).to.equal(403);
    }
    expect((await service.get(`/v1/targets/${target.id}`)).body.data).to.deep.include({ label: 'guarded' });
    expect((await service.get(`/v1/scans/scheduled/${schedule.id}`)).body.data).to.deep.include({ name: 'guarded', schedule: 'DAILY', disabled: false });
    expect((await service.get('/v1/scans/scheduled')).body.data).to.have.length(1);
    expect((await service.get('/v1/scans')).body.data).to.have.length(before.scans);
    expect(events()).to.equal(before.events);
    await service.delete(`/v1/scans/scheduled/${schedule.id}`);
  });
});

describe('dashboard: stopping scans', function () {
  this.timeout(120_000);
  let busy: TestService;
  let listener: TcpListener;

  before(async () => {
    listener = await tcpListener({ silent: true });
    busy = await TestService.start({ env: { ...LAB, VIGIL_MAX_CONCURRENT_SCANS: '1' } });
  });
  after(async () => {
    await busy?.stop();
    await listener?.close();
  });

  it('stops a queued scan at once and a running one through STOPPING, and refuses to delete a running scan, saying why', async () => {
    const client = await new DashboardClient(busy.baseUrl).signedIn(busy.apiKey);
    const running = (await busy.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
    await waitFor(
      async () => (await busy.get(`/v1/scans/${running.id}`)).body.data.state,
      (state) => state !== 'QUEUED',
      'the first scan to run',
    );
    const queued = (await busy.post('/v1/scans', { type: 'NMAP', targets: [nowhere(2)] })).body.data;
    expect(queued.state).to.equal('QUEUED');

    const queuedPage = await client.get(`/dashboard/scans/${queued.id}`);
    expect(queuedPage.text).to.include('Stop scan');
    expect(queuedPage.text).to.not.include('Delete scan');
    const refused = await client.post(`/dashboard/scans/${running.id}/delete`);
    expect(refused.status).to.equal(400);
    expect(/class="notice notice-error" role="alert">([^<]+)</.exec(refused.text)![1]).to.match(
      /is RUNNING; only SUCCEEDED, STOPPED, FAILED or OVER_LIMIT scans can be deleted \(stop it first\)\.$/,
    );

    expect((await client.post(`/dashboard/scans/${queued.id}/stop`)).location).to.equal(`/dashboard/scans/${queued.id}?notice=scan-stopping`);
    expect((await busy.get(`/v1/scans/${queued.id}`)).body.data.state).to.equal('STOPPED');
    const again = await client.post(`/dashboard/scans/${queued.id}/stop`);
    expect(again.status).to.equal(400);
    expect(again.text).to.include('is already STOPPED and cannot be stopped.');

    expect((await client.post(`/dashboard/scans/${running.id}/stop`)).status).to.equal(303);
    await waitFor(
      async () => (await busy.get(`/v1/scans/${running.id}`)).body.data.state,
      (state) => state === 'STOPPED',
      'the running scan to stop',
    );
    expect((await client.post(`/dashboard/scans/${running.id}/delete`)).location).to.equal('/dashboard/scans?notice=scan-deleted');
  });
});
