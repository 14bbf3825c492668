/**
 * The dashboard's pages over HTTP against the real service: API keys,
 * webhook endpoints with their secret, test event and delivery log (to real
 * HTTPS receivers), and risks with filters, pages and acceptance. Another
 * account's ids are 404s that change nothing; hostile text from users and
 * scanner files is shown as text.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyWebhook } from '../../src/domain/webhooks/signature.js';
import { DashboardClient, importNmapReport, nmapReport } from '../support/dashboard-client.js';
import { makeCertificates, startReceiver, type Receiver } from '../support/https-receiver.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const HOSTILE = `<script>alert("x")</script>' onmouseover="alert(1)`;
const HOSTILE_ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&quot;alert(1)';

let service: TestService;
let certs: ReturnType<typeof tempDir>;
let receivers: Receiver[];
let user: DashboardClient;

before(async () => {
  certs = tempDir();
  const pems = makeCertificates(certs.path);
  const caFile = join(certs.path, 'ca.pem');
  writeFileSync(caFile, pems.caCert);
  const answer = (status: number) =>
    startReceiver(pems.serverKey, pems.serverCert, (_request, response) => {
      response.writeHead(status);
      response.end();
    });
  receivers = [await answer(204), await answer(204), await answer(500)];
  service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8', VIGIL_WEBHOOK_CA_FILE: caFile } });
  user = await new DashboardClient(service.baseUrl).signedIn(service.apiKey);
});
after(async () => {
  await service.stop();
  for (const receiver of receivers) await receiver.close();
  certs.remove();
});

/** The ids linked from a page under `prefix`, in page order. */
const idsIn = (page: string, prefix: string) => [...page.matchAll(new RegExp(`href="${prefix}/([0-9a-f-]{36})"`, 'g'))].map((match) => match[1]!);

describe('dashboard: API keys', () => {
  it('opens on the overview, which says what it shows without naming a time of day it may not be', async () => {
    const overview = await user.get('/dashboard');
    expect(overview.text).to.include("The state of this account's targets now:");
    expect(overview.text).to.not.match(/this (morning|afternoon|evening)/);
  });

  it("shows the account's name and id, which the vigil command takes as --account", async () => {
    const listed = await user.get('/dashboard/keys');
    expect(listed.text).to.include(`<dt>Account id</dt><dd><code>${service.accountId}</code></dd>`);
    expect(listed.text).to.match(/<dt>Name<\/dt><dd>[^<]+<\/dd>/);
    expect(listed.text).to.include('vigil accounts create-key --account');
  });

  it('creates a key shown exactly once, which then works on the API, and lists it without the secret', async () => {
    const created = await user.post('/dashboard/keys', { name: '  deploy bot  ' });
    expect(created.status).to.equal(200);
    const key = /id="new-api-key" readonly value="(vgl_[^"]+)"/.exec(created.text)![1]!;
    expect(created.text).to.include('Key “deploy bot” created');
    expect((await service.get('/v1/risks', { key })).status).to.equal(200);
    const listed = await user.get('/dashboard/keys');
    expect(listed.text).to.include('<th scope="row">deploy bot</th>');
    expect(listed.text).to.not.include(key);
    expect(listed.text).to.not.include('new-api-key');
  });

  it('refuses a key without a name and keeps the form', async () => {
    const response = await user.post('/dashboard/keys', { name: '   ' });
    expect(response.status).to.equal(400);
    expect(response.text).to.include('A key needs a name of 1 to 100 characters');
    expect(response.text).to.include('aria-invalid="true"');
  });

  it('revokes a key: the API refuses it from then on and the list says so', async () => {
    const { id, apiKey } = service.vigil.accounts.createApiKey(service.accountId, 'to revoke');
    const response = await user.post(`/dashboard/keys/${id}/revoke`);
    expect(response.status).to.equal(303);
    expect(response.location).to.equal('/dashboard/keys?notice=key-revoked');
    expect((await service.get('/v1/risks', { key: apiKey })).status).to.equal(401);
    const page = await user.get(response.location!);
    expect(page.text).to.include('role="status"');
    expect(page.text).to.match(/to revoke<\/th>\s*<td>.*<\/td>\s*<td><span class="badge badge-revoked">Revoked<\/span>/);
  });

  it('shows a hostile key name as text', async () => {
    const response = await user.post('/dashboard/keys', { name: HOSTILE });
    expect(response.status).to.equal(200);
    expect(response.text).to.include(HOSTILE_ESCAPED);
    expect(response.text).to.not.include('<script>');
  });
});

describe('dashboard: webhook endpoints', () => {
  const addEndpoint = async (url: string): Promise<string> => {
    const response = await user.post('/dashboard/webhooks', { url });
    expect(response.status, response.text).to.equal(303);
    return /\/dashboard\/webhooks\/([0-9a-f-]{36})\?notice=endpoint-added$/.exec(response.location!)![1]!;
  };

  it('refuses a URL the service refuses and shows its sentence in the form', async () => {
    const response = await user.post('/dashboard/webhooks', { url: 'http://hooks.example.com/vigil' });
    expect(response.status).to.equal(400);
    const error = /id="field-url-error" role="alert">([^<]+)</.exec(response.text)![1]!;
    expect(error).to.match(/^Webhook endpoint URL .* https/);
    expect(response.text).to.include('value="http://hooks.example.com/vigil"');
    expect(service.vigil.webhookEndpoints.list(service.accountId)).to.have.length(0);
  });

  it('lists an endpoint, keeps its secret hidden until revealed, and deletes it', async () => {
    const id = await addEndpoint(`${receivers[0]!.url}?list`);
    const secret = service.vigil.webhookEndpoints.get(service.accountId, id).secret;
    const list = await user.get('/dashboard/webhooks');
    expect(idsIn(list.text, '/dashboard/webhooks')).to.include(id);
    expect(list.text).to.not.include(secret);
    const detail = await user.get(`/dashboard/webhooks/${id}`);
    expect(detail.text).to.include('Reveal signing secret');
    expect(detail.text).to.not.include(secret);
    const revealed = await user.post(`/dashboard/webhooks/${id}/reveal`);
    expect(revealed.status).to.equal(200);
    expect(revealed.text).to.include(`id="signing-secret" readonly value="${secret}"`);
    const deleted = await user.post(`/dashboard/webhooks/${id}/delete`);
    expect(deleted.location).to.equal('/dashboard/webhooks?notice=endpoint-deleted');
    expect(service.vigil.webhookEndpoints.list(service.accountId).map((endpoint) => endpoint.id)).to.not.include(id);
    expect((await user.get(`/dashboard/webhooks/${id}`)).status).to.equal(404);
  });

  it('sends a signed test event to that endpoint only, and the delivery log shows the attempt', async () => {
    const [chosen, bystander, failing] = receivers as [Receiver, Receiver, Receiver];
    const id = await addEndpoint(chosen.url);
    const otherId = await addEndpoint(bystander.url);
    const failingId = await addEndpoint(`${failing.url}?failing`);
    const before = { chosen: chosen.requests.length, bystander: bystander.requests.length };
    const sent = await user.post(`/dashboard/webhooks/${id}/test`);
    expect(sent.location).to.equal(`/dashboard/webhooks/${id}?notice=test-sent`);
    expect((await user.get(sent.location!)).text).to.include('Test event queued');

    const [request] = await waitFor(
      async () => chosen.requests.slice(before.chosen),
      (requests) => requests.length > 0,
      'the test event',
    );
    const event = JSON.parse(request!.body);
    expect(event).to.deep.include({ type: 'webhook.test' });
    expect(event.data).to.deep.include({ endpoint_id: id });
    const secret = service.vigil.webhookEndpoints.get(service.accountId, id).secret;
    expect(verifyWebhook(secret, request!.headers['x-service-timestamp'] as string, request!.body, request!.headers['x-service-signature'] as string)).to.equal(
      true,
    );

    const log = await waitFor(
      async () => (await user.get(`/dashboard/webhooks/${id}`)).text,
      (text) => text.includes('HTTP 204'),
      'the attempt in the delivery log',
    );
    expect(log).to.include('<code>webhook.test</code>');
    expect(log).to.include(event.id);
    expect(log).to.match(/<dt>Delivered<\/dt><dd>1<\/dd>/);
    expect(log).to.match(/\d+ ms<\/td>/);

    // A failing endpoint's attempt is logged with its status, and the delivery stays pending for a retry.
    await user.post(`/dashboard/webhooks/${failingId}/test`);
    const failed = await waitFor(
      async () => (await user.get(`/dashboard/webhooks/${failingId}`)).text,
      (text) => text.includes('HTTP 500'),
      'the failed attempt',
    );
    expect(failed).to.match(/<dt>Pending<\/dt><dd>1<\/dd>/);

    // Give the dispatcher time to have sent anything else it would send, then check the bystander got nothing.
    await user.post(`/dashboard/webhooks/${id}/test`);
    await waitFor(
      async () => chosen.requests.length,
      (count) => count >= before.chosen + 2,
      'the second test event',
    );
    expect(bystander.requests.slice(before.bystander)).to.deep.equal([]);
    expect((await user.get(`/dashboard/webhooks/${otherId}`)).text).to.include('No delivery attempts yet.');
  });
});

describe('dashboard: risks', () => {
  let riskIds: string[];

  before(async () => {
    const ports = Array.from({ length: 28 }, (_, index) => ({ port: 8000 + index }));
    await importNmapReport(
      service,
      service.apiKey,
      nmapReport('93.184.216.34', [
        ...ports,
        {
          port: 22,
          product: HOSTILE,
          cves: [
            { id: 'CVE-2024-0001', cvss: '9.8' },
            { id: 'CVE-2024-0002', cvss: '5.0' },
          ],
        },
      ]),
    );
    await importNmapReport(service, service.apiKey, nmapReport('93.184.216.35', [{ port: 443 }]));
    riskIds = (await service.get('/v1/risks')).body.data.map((risk: { id: string }) => risk.id);
  });

  const listed = async (query: Record<string, string>) => idsIn((await user.get(`/dashboard/risks?${new URLSearchParams(query)}`)).text, '/dashboard/risks');
  const apiIds = async (filters: Record<string, string[]>) =>
    (await service.get('/v1/risks', { query: { filters: JSON.stringify(filters) } })).body.data.map((risk: { id: string }) => risk.id);

  it('lists 25 risks a page, newest first, with a next page that continues where the first ended', async () => {
    expect(riskIds.length).to.equal(32); // 28 + 1 open ports and 2 CVEs on the first host, 1 port on the second
    const first = await user.get('/dashboard/risks');
    expect(idsIn(first.text, '/dashboard/risks')).to.deep.equal(riskIds.slice(0, 25));
    const next = /href="(\/dashboard\/risks\?page_token=[^"]+)">Next page</.exec(first.text)![1]!.replace(/&amp;/g, '&');
    const second = await user.get(next);
    expect(idsIn(second.text, '/dashboard/risks')).to.deep.equal(riskIds.slice(25));
    expect(second.text).to.include('First page');
    expect(second.text).to.not.include('Next page');
  });

  it('filters by threat level, status, acceptance and target text, as the API would', async () => {
    expect(await listed({ threat_level: 'CRITICAL' })).to.deep.equal(await apiIds({ 'risk_definition.threat_level': ['CRITICAL'] }));
    expect(await listed({ threat_level: 'CRITICAL' })).to.have.length(1);
    expect(await listed({ threat_level: 'MEDIUM' })).to.have.length(1);
    expect(await listed({ status: 'CLOSED' })).to.deep.equal([]);
    const openInfo = await apiIds({ status: ['OPEN'], 'risk_definition.threat_level': ['INFO'] });
    expect(openInfo).to.have.length(30);
    expect(await listed({ status: 'OPEN', threat_level: 'INFO' })).to.deep.equal(openInfo.slice(0, 25));
    const target = (await service.get('/v1/targets', { query: { filters: JSON.stringify({ target: ['93.184.216.35'] }) } })).body.data[0];
    expect(await listed({ target: '216.35' })).to.deep.equal(await apiIds({ target_id: [target.id] }));
    expect(await listed({ target: '216.35' })).to.have.length(1);
    expect(await listed({ target: 'no such host' })).to.deep.equal([]);
    const accepted = riskIds[3]!;
    await service.post(`/v1/risks/${accepted}/accept`, { note: 'filtered upstream' });
    expect(await listed({ accepted: 'yes' })).to.deep.equal([accepted]);
    expect(await listed({ accepted: 'no', threat_level: 'INFO' })).to.not.include(accepted);
    await service.post(`/v1/risks/${accepted}/unaccept`);
    // A value the form does not offer is ignored rather than an error.
    expect((await user.get('/dashboard/risks?threat_level=<b>&status=MAYBE')).status).to.equal(200);
  });

  it('sorts the risk table by threat level from its column header link, both ways, across pages, keeping the filters', async () => {
    const apiSorted = async (sort: string, filters: Record<string, string[]> = {}) =>
      (await service.get('/v1/risks', { query: { sort, filters: JSON.stringify(filters) } })).body.data.map(
        (risk: { id: string; risk_definition: { threat_level: string } }) => risk.id,
      );
    const headerLink = (page: string) => {
      const header = /<th scope="col" aria-sort="(\w+)"><a href="([^"]+)">Threat level/.exec(page)!;
      return { ariaSort: header[1], href: header[2]!.replace(/&amp;/g, '&') };
    };
    const unsorted = await user.get('/dashboard/risks');
    expect(headerLink(unsorted.text)).to.deep.equal({ ariaSort: 'none', href: '/dashboard/risks?sort=threat_level+desc' });

    const severest = await user.get(headerLink(unsorted.text).href);
    const descending = await apiSorted('threat_level desc');
    expect(idsIn(severest.text, '/dashboard/risks')).to.deep.equal(descending.slice(0, 25));
    const levels = [...severest.text.matchAll(/<td><span class="badge badge-(critical|high|medium|low|info)"/g)].map((match) => match[1]!.toUpperCase());
    expect(levels.slice(0, 3)).to.deep.equal(['CRITICAL', 'MEDIUM', 'INFO']);
    expect(severest.text).to.include('<caption>Risks, most severe first');
    expect(headerLink(severest.text)).to.deep.equal({ ariaSort: 'descending', href: '/dashboard/risks?sort=threat_level+asc' });
    const next = /href="(\/dashboard\/risks\?[^"]*page_token=[^"]+)">Next page</.exec(severest.text)![1]!.replace(/&amp;/g, '&');
    expect(next).to.include('sort=threat_level+desc');
    expect(idsIn((await user.get(next)).text, '/dashboard/risks')).to.deep.equal(descending.slice(25));

    const mildest = await user.get(headerLink(severest.text).href);
    expect(idsIn(mildest.text, '/dashboard/risks')).to.deep.equal((await apiSorted('threat_level asc')).slice(0, 25));
    expect(headerLink(mildest.text).ariaSort).to.equal('ascending');

    // Filters stay in the header link, and the filter form keeps the order.
    const filtered = await user.get('/dashboard/risks?target=93.184.216.34&sort=threat_level+desc');
    expect(headerLink(filtered.text).href).to.equal('/dashboard/risks?sort=threat_level+asc&target=93.184.216.34');
    expect(filtered.text).to.include('<input type="hidden" name="sort" value="threat_level desc">');
    // An order the table does not offer is newest first, not an error.
    expect(idsIn((await user.get('/dashboard/risks?sort=title')).text, '/dashboard/risks')).to.deep.equal(riskIds.slice(0, 25));
  });

  it("sorts a target's risk table by threat level from its header link", async () => {
    const target = (await service.get('/v1/targets', { query: { filters: JSON.stringify({ target: ['93.184.216.34'] }) } })).body.data[0];
    const page = await user.get(`/dashboard/targets/${target.id}`);
    const href = /aria-sort="none"><a href="([^"]+)">Threat level/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect(href).to.equal(`/dashboard/targets/${target.id}?risk_sort=threat_level+desc#target-risks-heading`);
    const sorted = await user.get(href.replace(/#.*/, ''));
    const expected = (
      await service.get('/v1/risks', { query: { sort: 'threat_level desc', filters: JSON.stringify({ target_id: [target.id] }) } })
    ).body.data.map((risk: { id: string }) => risk.id);
    expect(idsIn(sorted.text, '/dashboard/risks')).to.deep.equal(expected.slice(0, 25));
    expect(sorted.text).to.include('aria-sort="descending"');
  });

  it('shows hostile scanner text escaped on the list and the risk page', async () => {
    const list = await user.get('/dashboard/risks?threat_level=INFO&target=93.184.216.34');
    expect(list.text).to.include(HOSTILE_ESCAPED);
    const hostile = (await service.get('/v1/risks')).body.data.find((risk: { risk_definition: { title: string } }) =>
      risk.risk_definition.title.includes('<script>'),
    );
    const page = await user.get(`/dashboard/risks/${hostile.id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(HOSTILE_ESCAPED);
    for (const response of [list, page]) expect(response.text).to.not.match(/<script|onmouseover="/);
  });

  it('accepts a risk with a note, shows it accepted, and un-accepts it', async () => {
    const id = riskIds[0]!;
    const empty = await user.post(`/dashboard/risks/${id}/accept`, { note: '   ' });
    expect(empty.status).to.equal(400);
    expect(empty.text).to.include('Note must say why the risk is accepted.');
    const accepted = await user.post(`/dashboard/risks/${id}/accept`, { note: `by design ${HOSTILE}` });
    expect(accepted.location).to.equal(`/dashboard/risks/${id}?notice=risk-accepted`);
    const page = await user.get(accepted.location!);
    expect(page.text).to.include('This risk is accepted.');
    expect(page.text).to.include(`by design ${HOSTILE_ESCAPED}`);
    expect((await service.get(`/v1/risks/${id}`)).body.data).to.deep.include({ is_accepted: true });
    const unaccepted = await user.post(`/dashboard/risks/${id}/unaccept`);
    expect(unaccepted.location).to.equal(`/dashboard/risks/${id}?notice=risk-unaccepted`);
    expect((await user.get(unaccepted.location!)).text).to.include('This risk is not accepted.');
    expect((await service.get(`/v1/risks/${id}`)).body.data).to.deep.include({ is_accepted: false });
  });
});

describe("dashboard: another account's ids", () => {
  it('are 404s that change nothing, for keys, endpoints and risks', async () => {
    const other = service.createAccount('other-tenant');
    const otherKey = service.vigil.accounts.createApiKey(other.account.id, 'theirs');
    const otherEndpoint = service.vigil.webhookEndpoints.add(other.account.id, receivers[1]!.url);
    await importNmapReport(service, other.apiKey, nmapReport('93.184.216.40', [{ port: 25 }]));
    const otherRisk = (await service.get('/v1/risks', { key: other.apiKey })).body.data[0].id;
    const events = () => (service.vigil.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    const eventsBefore = events();

    const attempts = [
      await user.get(`/dashboard/webhooks/${otherEndpoint.id}`),
      await user.post(`/dashboard/webhooks/${otherEndpoint.id}/reveal`),
      await user.post(`/dashboard/webhooks/${otherEndpoint.id}/test`),
      await user.post(`/dashboard/webhooks/${otherEndpoint.id}/delete`),
      await user.get(`/dashboard/risks/${otherRisk}`),
      await user.post(`/dashboard/risks/${otherRisk}/accept`, { note: 'not mine' }),
      await user.post(`/dashboard/risks/${otherRisk}/unaccept`),
      await user.post(`/dashboard/keys/${otherKey.id}/revoke`),
    ];
    expect(attempts.map((response) => response.status)).to.deep.equal(Array(8).fill(404));
    for (const response of attempts) {
      expect(response.text).to.include('There is nothing here');
      expect(response.text).to.not.include(otherEndpoint.secret);
    }
    expect(service.vigil.webhookEndpoints.list(other.account.id)).to.have.length(1);
    expect(service.vigil.accounts.listApiKeys(other.account.id).every((key) => key.revokedAt === null)).to.equal(true);
    expect((await service.get(`/v1/risks/${otherRisk}`, { key: other.apiKey })).body.data).to.deep.include({ is_accepted: false });
    expect(events()).to.equal(eventsBefore);
    expect(idsIn((await user.get('/dashboard/risks')).text, '/dashboard/risks')).to.not.include(otherRisk);
    expect((await user.get('/dashboard/webhooks')).text).to.not.include(otherEndpoint.id);
  });
});
