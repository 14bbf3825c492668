/**
 * Sources and uploaded scanner results (SPEC.md, Imported results) over HTTP
 * against the real service: real scanner files from test/fixtures (their
 * private addresses swapped for public ones where the Target rules need it),
 * the risk history they feed, target conflicts, and hostile uploads that
 * must be refused while they stream, leaving nothing behind.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { TestService, type TestResponse } from '../support/test-service.js';
import { probeUntil } from '../support/wait.js';
import { receiveEvents } from '../support/event-receiver.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';

const FIXTURES = new URL('../fixtures/', import.meta.url);
const fixture = (path: string): Buffer => readFileSync(new URL(path, FIXTURES));

/** scanme.nmap.org: one public host, OS match 'Linux 3.0', 4 open tcp ports and 1 open udp port. */
const NMAP_SCANME = fixture('nmap/rubynmap-nmap-scan.xml');
/** Two public hosts (google.com, amazon.com), ports 80 and 443 open on each. */
const NMAP_TWO_HOSTS = fixture('nmap/defectdojo-nmap-issue12411.xml');
/** GVM 22 report on 10.99.99.99 (host name server99), one CRITICAL result; moved to a public address. */
const OPENVAS_REPORT = Buffer.from(fixture('openvas/defectdojo-openvas-report_detail_v2.xml').toString('utf8').replaceAll('10.99.99.99', '93.184.216.34'));
/** Old OpenVAS export whose only host is 10.0.1.1. */
const OPENVAS_PRIVATE = fixture('openvas/cr0hn-openvas-airplay.xml');
/** ZAP 2.9 report of https://www.example.com: 7 alerts. */
const ZAP_EXAMPLE = fixture('zap/securecodebox-zap-example.com.json');
/** ZAP 2.12 report of https://example-backend.example.com: 5 alerts. */
const ZAP_BACKEND = fixture('zap/secobserve-zap-owasp_zap.json');

const MIB = 1024 * 1024;

interface Caller {
  key: string;
  accountId: string;
}

interface FilePart {
  content: Uint8Array | string;
  name?: string;
  field?: string;
}

let service: TestService;
let accounts = 0;

before(async () => {
  service = await TestService.start();
});
after(async () => {
  await service.stop();
});

/**
 * Every test gets its own account, so "nothing stored" means exactly that,
 * with a webhook endpoint: events are stored only for their receivers.
 */
function newCaller(): Caller {
  const { account, apiKey } = service.createAccount(`imports-${++accounts}`);
  receiveEvents(service.vigil.webhookEndpoints, account.id);
  return { key: apiKey, accountId: account.id };
}

function expectError(response: TestResponse, status: number, message?: RegExp): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error).to.be.a('string').that.is.not.empty;
  if (message !== undefined) expect(response.body.error).to.match(message);
  expect(response.body.ref).to.be.a('string').that.is.not.empty;
}

async function createSource(caller: Caller, name = 'lab scans'): Promise<string> {
  const response = await service.post('/v1/sources', { source_type: 'IMPORTED', name }, { key: caller.key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data.id;
}

function formOf(fields: Record<string, string | undefined>, files: FilePart[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
  for (const file of files) form.append(file.field ?? 'file', new Blob([file.content]), file.name ?? 'result');
  return form;
}

async function upload(caller: Caller, fields: Record<string, string | undefined>, ...files: FilePart[]): Promise<TestResponse> {
  return service.request('POST', '/v1/results', { key: caller.key, formData: formOf(fields, files) });
}

async function uploadOk(caller: Caller, fields: Record<string, string | undefined>, file: FilePart) {
  const response = await upload(caller, fields, file);
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function listAll(caller: Caller, path: string): Promise<any[]> {
  const response = await service.get(path, { key: caller.key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function getTarget(caller: Caller, id: string) {
  const response = await service.get(`/v1/targets/${id}`, { key: caller.key });
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

/** A refused upload leaves no target, scan, risk, event or result file, and the service still answers. */
async function expectNothingStored(caller: Caller): Promise<void> {
  expect(await listAll(caller, '/v1/targets')).to.deep.equal([]);
  expect(await listAll(caller, '/v1/scans')).to.deep.equal([]);
  expect(await listAll(caller, '/v1/risks')).to.deep.equal([]);
  expect(eventsOf(caller)).to.deep.equal([]);
  expect((await service.get('/healthz')).status).to.equal(200);
}

/** The account's outbox, oldest first (an upload's scan event is stored in parts: the store puts them together). */
function eventsOf(caller: Caller): Array<{ type: string; data: Record<string, unknown> }> {
  return new SqliteScanRepository(service.vigil.db)
    .eventsFor(caller.accountId)
    .map((event) => ({ type: event.type, data: event.data as Record<string, unknown> }));
}

/** Scan ids with a folder of result files: a refused upload must not leave one behind. */
function resultFolders(): string[] {
  try {
    return readdirSync(join(service.settings.dataDir, 'results'));
  } catch {
    return [];
  }
}

/** A multipart body written by hand, for what FormData cannot express. */
function multipart(boundary: string, parts: Array<{ name: string; value: string | Uint8Array; filename?: string }>, closing = true): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n\r\n`));
    chunks.push(Buffer.from(part.value), Buffer.from('\r\n'));
  }
  if (closing) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe('sources', () => {
  it('creates an IMPORTED source and answers { data: { id, source_type, name } }', async () => {
    const caller = newCaller();
    const response = await service.post('/v1/sources', { source_type: 'IMPORTED', name: '  Pentest 2026  ', extra: 'ignored' }, { key: caller.key });
    expect(response.status, response.text).to.equal(200);
    expect(response.body.data).to.have.keys('id', 'source_type', 'name');
    expect(response.body.data).to.include({ source_type: 'IMPORTED', name: 'Pentest 2026' });
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['without source_type', { name: 'x' }, /source_type/],
    ['with a source_type other than IMPORTED', { source_type: 'CLOUD', name: 'x' }, /source_type/],
    ['without name', { source_type: 'IMPORTED' }, /name/],
    ['with an empty name', { source_type: 'IMPORTED', name: '' }, /name/],
    ['with a blank name', { source_type: 'IMPORTED', name: '   ' }, /name/],
    ['with a name over 255 characters', { source_type: 'IMPORTED', name: 'n'.repeat(256) }, /name/],
    ['with a name that is not a string', { source_type: 'IMPORTED', name: ['x'] }, /name/],
  ];
  for (const [what, body, message] of invalid) {
    it(`refuses a source ${what} with 400`, async () => {
      const caller = newCaller();
      expectError(await service.post('/v1/sources', body, { key: caller.key }), 400, message);
      expect(await listAll(caller, '/v1/sources')).to.deep.equal([]);
    });
  }

  it("lists the account's sources newest first, a page at a time, filtered by name", async () => {
    const caller = newCaller();
    const ids = [await createSource(caller, 'first'), await createSource(caller, 'second'), await createSource(caller, 'third')];
    expect((await listAll(caller, '/v1/sources')).map((source) => source.id)).to.deep.equal([...ids].reverse());
    const first = await service.get('/v1/sources', { key: caller.key, query: { page_size: 2 } });
    expect(first.body.data.map((source: { id: string }) => source.id)).to.deep.equal([ids[2], ids[1]]);
    const second = await service.get('/v1/sources', { key: caller.key, query: { page_size: 2, page_token: first.body.next_page_token } });
    expect(second.body.data.map((source: { id: string }) => source.id)).to.deep.equal([ids[0]]);
    expect(second.body).not.to.have.property('next_page_token');
    const named = await service.get('/v1/sources', { key: caller.key, query: { filters: JSON.stringify({ name: ['second'] }) } });
    expect(named.body.data.map((source: { id: string }) => source.id)).to.deep.equal([ids[1]]);
    expectError(await service.get('/v1/sources', { key: caller.key, query: { filters: JSON.stringify({ colour: ['red'] }) } }), 400, /source_type, name/);
  });

  it("never shows another account's sources", async () => {
    const owner = newCaller();
    await createSource(owner);
    expect(await listAll(newCaller(), '/v1/sources')).to.deep.equal([]);
  });

  it('needs an API key', async () => {
    expectError(await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'x' }, { key: null }), 401);
  });
});

describe('uploading results: nmap', () => {
  it('imports the hosts of the file as UPLOADED_RESULTS targets with their OS and host name, and their open ports as risks', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const data = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: NMAP_SCANME, name: 'scan.xml' });
    expect(data).to.deep.include({ source_id: sourceId, scan_type: 'NMAP', skipped_hosts: [], risks: { new_open: 5, still_open: 0, closed: 0 } });
    expect(data.targets.map((target: { target: string }) => target.target)).to.deep.equal(['45.33.32.156']);

    const target = await getTarget(caller, data.targets[0].target_id);
    expect(target).to.include({ target: '45.33.32.156', origin: 'UPLOADED_RESULTS', os: 'Linux 3.0', hostname: 'scanme.nmap.org' });
    expect(target.last_scanned_at).to.be.a('string');
    const listed = await listAll(caller, '/v1/targets');
    expect(listed).to.deep.equal([target]);

    const risks = await listAll(caller, '/v1/risks');
    expect(risks).to.have.length(5);
    expect(risks.every((risk) => risk.target_id === target.id && risk.status === 'OPEN' && risk.risk_definition.scan_type === 'NMAP')).to.equal(true);
    expect(risks.map((risk) => risk.risk_definition.title)).to.include('Open port 123/udp (ntp NTP v4)');
  });

  it('records the upload as a SUCCEEDED scan that names its source, keeps the file byte for byte and sends scan.created', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller, 'quarterly pentest');
    const data = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: NMAP_SCANME });
    const scan = (await service.get(`/v1/scans/${data.scan_id}`, { key: caller.key })).body.data;
    expect(scan).to.include({ type: 'NMAP', state: 'SUCCEEDED', progress: 100, is_authenticated: false });
    expect(scan.requested_targets).to.deep.equal(data.targets);
    expect(scan.resolved_targets).to.deep.equal([{ ...data.targets[0], addresses: ['45.33.32.156'] }]);
    expect(scan.risks.new_open).to.have.length(5);
    const [condition] = scan.conditions;
    expect(condition).to.include({ type: 'Succeeded', status: 'True', reason: 'Imported' });
    expect(condition.message).to.contain(`'quarterly pentest' (id ${sourceId})`);

    // The uploaded file, then the imported scan's PDF, as for a scan Vigil ran (test/e2e/scan-pdf.test.ts).
    expect(scan.results.map((result: { content_type: string }) => result.content_type)).to.deep.equal(['application/xml', 'application/pdf']);
    const file = await fetch(`${service.baseUrl}/v1/results/${scan.results[0].result_id}`, { headers: { 'X-SERVICE-API-KEY': caller.key } });
    expect(file.status).to.equal(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(NMAP_SCANME)).to.equal(true);
    const pdf = await fetch(`${service.baseUrl}/v1/results/${scan.results[1].result_id}`, { headers: { 'X-SERVICE-API-KEY': caller.key } });
    expect(pdf.status).to.equal(200);
    const pdfPath = join(service.settings.dataDir, 'imported-scan.pdf');
    writeFileSync(pdfPath, Buffer.from(await pdf.arrayBuffer()));
    const pdfText = execFileSync('pdftotext', ['-layout', pdfPath, '-'], { encoding: 'utf8' });
    expect(pdfText).to.include(`NMAP scan of ${data.targets[0].target}`);
    expect(pdfText).to.match(/New open risks \(new_open\)[\s\S]*Open port 22\/tcp[\s\S]*Still open risks \(still_open\)/);

    const events = eventsOf(caller);
    // The risk events are written with the risks, held back from delivery until the last transaction writes the scan's.
    expect(events.map((event) => event.type)).to.deep.equal(['risk.created', 'risk.created', 'risk.created', 'risk.created', 'risk.created', 'scan.created']);
    expect(events.at(-1)!.data).to.deep.include({ id: data.scan_id, state: 'SUCCEEDED' });
  });

  it('feeds the same risk history as scans: the same file again is still_open, a port gone is closed', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const first = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: NMAP_SCANME });
    const again = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: NMAP_SCANME });
    expect(again.risks).to.deep.equal({ new_open: 0, still_open: 5, closed: 0 });
    expect(again.targets).to.deep.equal(first.targets);

    const portClosed = NMAP_SCANME.toString('utf8').replace('portid="9929"><state state="open"', 'portid="9929"><state state="closed"');
    const third = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: portClosed });
    expect(third.risks).to.deep.equal({ new_open: 0, still_open: 4, closed: 1 });
    const risks = await listAll(caller, '/v1/risks');
    expect(risks).to.have.length(5);
    expect(risks.filter((risk) => risk.status === 'CLOSED').map((risk) => risk.risk_definition.title)).to.deep.equal([
      'Open port 9929/tcp (nping-echo Nping echo)',
    ]);
    expect(await listAll(caller, '/v1/scans')).to.have.length(3);
  });

  it('keeps NMAP_UDP risks apart from NMAP ones on the same target', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: NMAP_SCANME });
    const udp = await uploadOk(caller, { source_id: sourceId, scan_type: 'NMAP_UDP' }, { content: NMAP_SCANME });
    expect(udp).to.deep.include({ scan_type: 'NMAP_UDP', risks: { new_open: 5, still_open: 0, closed: 0 } });
    const types = (await listAll(caller, '/v1/risks')).map((risk) => risk.risk_definition.scan_type);
    expect(types.filter((type) => type === 'NMAP_UDP')).to.have.length(5);
    expect(await listAll(caller, '/v1/targets')).to.have.length(1);
  });

  it('infers one target per host, each with its own risks', async () => {
    const caller = newCaller();
    const data = await uploadOk(caller, { source_id: await createSource(caller), scan_type: 'NMAP' }, { content: NMAP_TWO_HOSTS });
    expect(data.targets.map((target: { target: string }) => target.target)).to.deep.equal(['172.217.18.238', '54.239.28.85']);
    // Time-ordered ids (UUID v7), in the order the targets were created: the indexes keyed by target id grow at one end.
    const ids = data.targets.map((target: { target_id: string }) => target.target_id);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).to.deep.equal(ids);
    expect(data.risks.new_open).to.equal(4);
    for (const { target_id } of data.targets) {
      const risks = (await listAll(caller, '/v1/risks')).filter((risk) => risk.target_id === target_id);
      expect(risks.map((risk) => risk.risk_definition.title).sort()).to.deep.equal(['Open port 443/tcp (https)', 'Open port 80/tcp (http)']);
    }
    const google = await getTarget(caller, data.targets[0].target_id);
    expect(google).to.include({ hostname: 'google.com' });
    expect(google).not.to.have.property('os');
  });

  it('skips hosts that cannot be targets, reports them, and drops their findings', async () => {
    const caller = newCaller();
    const mixed = NMAP_TWO_HOSTS.toString('utf8').replace('addr="54.239.28.85"', 'addr="10.1.2.3"');
    const data = await uploadOk(caller, { source_id: await createSource(caller), scan_type: 'NMAP' }, { content: mixed });
    expect(data.targets.map((target: { target: string }) => target.target)).to.deep.equal(['172.217.18.238']);
    expect(data.skipped_hosts).to.have.length(1);
    expect(data.skipped_hosts[0].host).to.equal('10.1.2.3');
    expect(data.skipped_hosts[0].reason).to.match(/10\.0\.0\.0\/8/);
    expect(data.risks.new_open).to.equal(2);
    const scan = (await service.get(`/v1/scans/${data.scan_id}`, { key: caller.key })).body.data;
    expect(scan.conditions[0].message).to.match(/1 host\(s\) of the file were not valid targets/);
  });

  it('refuses a file whose every host is private, naming why, and stores nothing', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    expectError(
      await upload(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: fixture('nmap/securecodebox-nmap-local-network-verbose.xml') }),
      400,
      /no host in the file can be a target: target '192\.168\.178\.\d+' is in the 192\.168\.0\.0\/16 private-use/,
    );
    expectError(
      await upload(caller, { source_id: sourceId, scan_type: 'NMAP' }, { content: fixture('nmap/securecodebox-nmap-scanme.nmap.org-ipv6.xml') }),
      400,
      /IPv6/,
    );
    await expectNothingStored(caller);
  });

  it('parses the file even when the fields come after it', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const form = new FormData();
    form.append('file', new Blob([NMAP_SCANME]), 'scan.xml');
    form.append('scan_type', 'NMAP');
    form.append('source_id', sourceId);
    const response = await service.request('POST', '/v1/results', { key: caller.key, formData: form });
    expect(response.status, response.text).to.equal(200);
    expect(response.body.data.risks.new_open).to.equal(5);
  });
});

describe('uploading results: OpenVAS and ZAP', () => {
  it('imports an OpenVAS report: its host becomes the target, its results the risks', async () => {
    const caller = newCaller();
    const data = await uploadOk(
      caller,
      { source_id: await createSource(caller), scan_type: 'OPENVAS', target: 'https://ignored.example.com' },
      { content: OPENVAS_REPORT },
    );
    expect(data.targets.map((target: { target: string }) => target.target)).to.deep.equal(['93.184.216.34']);
    expect(data.risks).to.deep.equal({ new_open: 1, still_open: 0, closed: 0 });
    const [risk] = await listAll(caller, '/v1/risks');
    expect(risk.risk_definition).to.include({
      scan_type: 'OPENVAS',
      threat_level: 'CRITICAL',
      title: 'Microsoft Windows Multiple Vulnerabilities (KB5062557)',
    });
    expect(await getTarget(caller, data.targets[0].target_id)).to.deep.include({
      origin: 'UPLOADED_RESULTS',
      hostname: 'server99',
      health_score: { score: 60, grade: 'C' },
    });
    const scan = (await service.get(`/v1/scans/${data.scan_id}`, { key: caller.key })).body.data;
    expect(scan.results[0].content_type).to.equal('application/xml');
  });

  it('refuses an OpenVAS report whose only host is private', async () => {
    const caller = newCaller();
    expectError(await upload(caller, { source_id: await createSource(caller), scan_type: 'OPENVAS' }, { content: OPENVAS_PRIVATE }), 400, /10\.0\.0\.0\/8/);
    await expectNothingStored(caller);
  });

  it('imports a ZAP report into the target given with it', async () => {
    const caller = newCaller();
    const data = await uploadOk(
      caller,
      { source_id: await createSource(caller), scan_type: 'OWASP_ZAP', target: 'https://WWW.example.com/' },
      { content: ZAP_EXAMPLE, name: 'zap.json' },
    );
    expect(data.targets.map((target: { target: string }) => target.target)).to.deep.equal(['https://www.example.com/']);
    expect(data.risks).to.deep.equal({ new_open: 7, still_open: 0, closed: 0 });
    const scan = (await service.get(`/v1/scans/${data.scan_id}`, { key: caller.key })).body.data;
    expect(scan.results[0].content_type).to.equal('application/json');
    const again = await uploadOk(caller, { source_id: data.source_id, scan_type: 'OWASP_ZAP', target: 'https://www.example.com/' }, { content: ZAP_EXAMPLE });
    expect(again.risks).to.deep.equal({ new_open: 0, still_open: 7, closed: 0 });
  });

  it('imports an OWASP_ZAP_ACTIVE report', async () => {
    const caller = newCaller();
    const data = await uploadOk(
      caller,
      { source_id: await createSource(caller), scan_type: 'OWASP_ZAP_ACTIVE', target: 'https://example-backend.example.com' },
      { content: ZAP_BACKEND },
    );
    expect(data).to.deep.include({ scan_type: 'OWASP_ZAP_ACTIVE', risks: { new_open: 5, still_open: 0, closed: 0 } });
    const titles = (await listAll(caller, '/v1/risks')).map((risk) => risk.risk_definition.scan_type);
    expect(titles).to.deep.equal(Array(5).fill('OWASP_ZAP_ACTIVE'));
  });

  it('needs the target field for the ZAP types, held to the Target rules', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    expectError(await upload(caller, { source_id: sourceId, scan_type: 'OWASP_ZAP' }, { content: ZAP_EXAMPLE }), 400, /target is required for OWASP_ZAP/);
    expectError(
      await upload(caller, { source_id: sourceId, scan_type: 'OWASP_ZAP_ACTIVE', target: 'https://10.0.0.8/' }, { content: ZAP_EXAMPLE }),
      400,
      /10\.0\.0\.0\/8/,
    );
    expectError(await upload(caller, { source_id: sourceId, scan_type: 'OWASP_ZAP', target: 'ftp://example.com/' }, { content: ZAP_EXAMPLE }), 400, /target/);
    await expectNothingStored(caller);
  });
});

describe('uploading results: targets that already exist', () => {
  it('refuses a host that exists as a MANUAL target with 400 saying it already exists, storing nothing', async () => {
    const caller = newCaller();
    const manual = await service.post('/v1/targets', { target: '45.33.32.156', label: 'mine' }, { key: caller.key });
    expect(manual.status, manual.text).to.equal(200);
    const folders = resultFolders();
    expectError(
      await upload(caller, { source_id: await createSource(caller), scan_type: 'NMAP' }, { content: NMAP_SCANME }),
      400,
      /target '45\.33\.32\.156' already exists .*origin MANUAL/,
    );
    expect(await listAll(caller, '/v1/scans')).to.deep.equal([]);
    expect(await listAll(caller, '/v1/risks')).to.deep.equal([]);
    expect(await getTarget(caller, manual.body.data.id)).to.deep.equal(manual.body.data);
    expect(resultFolders()).to.deep.equal(folders);
  });

  it('refuses a ZAP upload whose target exists as a MANUAL target', async () => {
    const caller = newCaller();
    expect((await service.post('/v1/targets', { target: 'https://www.example.com' }, { key: caller.key })).status).to.equal(200);
    expectError(
      await upload(caller, { source_id: await createSource(caller), scan_type: 'OWASP_ZAP', target: 'https://www.example.com' }, { content: ZAP_EXAMPLE }),
      400,
      /already exists/,
    );
    expect(await listAll(caller, '/v1/scans')).to.deep.equal([]);
  });

  it('refuses the whole file when one of its hosts is a MANUAL target', async () => {
    const caller = newCaller();
    expect((await service.post('/v1/targets', { target: '54.239.28.85' }, { key: caller.key })).status).to.equal(200);
    expectError(
      await upload(caller, { source_id: await createSource(caller), scan_type: 'NMAP' }, { content: NMAP_TWO_HOSTS }),
      400,
      /'54\.239\.28\.85' already exists/,
    );
    expect((await listAll(caller, '/v1/targets')).map((target) => target.target)).to.deep.equal(['54.239.28.85']);
  });

  it('keeps UPLOADED_RESULTS targets read-only: update gives 400, delete gives 400', async () => {
    const caller = newCaller();
    const data = await uploadOk(caller, { source_id: await createSource(caller), scan_type: 'NMAP' }, { content: NMAP_SCANME });
    const id = data.targets[0].target_id;
    const before = await getTarget(caller, id);
    expectError(
      await service.put(`/v1/targets/${id}`, { label: 'renamed' }, { key: caller.key }),
      400,
      /created from uploaded scan results and cannot be updated/,
    );
    expectError(await service.patch(`/v1/targets/${id}`, { tags: ['x'] }, { key: caller.key }), 400, /cannot be updated/);
    expectError(await service.delete(`/v1/targets/${id}`, { key: caller.key }), 400, /created from uploaded scan results and cannot be deleted/);
    expect(await getTarget(caller, id)).to.deep.equal(before);
  });
});

describe('uploading results: fields', () => {
  it("refuses another account's source and an unknown source_id with 400", async () => {
    const caller = newCaller();
    const foreign = await createSource(newCaller());
    expectError(
      await upload(caller, { source_id: foreign, scan_type: 'NMAP' }, { content: NMAP_SCANME }),
      400,
      /source_id '.*' is not an IMPORTED source of this account/,
    );
    expectError(await upload(caller, { source_id: 'no-such-source', scan_type: 'NMAP' }, { content: NMAP_SCANME }), 400, /is not an IMPORTED source/);
    await expectNothingStored(caller);
  });

  for (const scanType of ['NUCLEI', 'NESSUS', 'SSLYZE', 'nmap', 'BOGUS']) {
    it(`refuses scan_type ${scanType} with 400 naming the uploadable types`, async () => {
      const caller = newCaller();
      const response = await upload(caller, { source_id: await createSource(caller), scan_type: scanType }, { content: NMAP_SCANME });
      expectError(response, 400, /scan_type .*NMAP, NMAP_UDP, OPENVAS, OWASP_ZAP, OWASP_ZAP_ACTIVE/);
      await expectNothingStored(caller);
    });
  }

  it('refuses a form without source_id, scan_type or file', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    expectError(await upload(caller, { scan_type: 'NMAP' }, { content: NMAP_SCANME }), 400, /source_id is required/);
    expectError(await upload(caller, { source_id: sourceId }, { content: NMAP_SCANME }), 400, /scan_type is required/);
    expectError(await upload(caller, { source_id: sourceId, scan_type: 'NMAP' }), 400, /a file part named 'file' is required$/);
    await expectNothingStored(caller);
  });

  it('refuses a second file part, a file part under another name, a file sent as text and a repeated field', async () => {
    const caller = newCaller();
    const fields = { source_id: await createSource(caller), scan_type: 'NMAP' };
    expectError(await upload(caller, fields, { content: NMAP_SCANME }, { content: NMAP_SCANME }), 400, /exactly one file part/);
    expectError(await upload(caller, fields, { content: NMAP_SCANME, field: 'report' }), 400, /file part must be named 'file'/);
    const asText = formOf(fields, []);
    asText.append('file', '<nmaprun></nmaprun>');
    expectError(await service.request('POST', '/v1/results', { key: caller.key, formData: asText }), 400, /sent as a text field/);
    const repeated = formOf(fields, [{ content: NMAP_SCANME }]);
    repeated.append('scan_type', 'NMAP');
    expectError(await service.request('POST', '/v1/results', { key: caller.key, formData: repeated }), 400, /'scan_type' is sent more than once/);
    await expectNothingStored(caller);
  });

  it('refuses bodies that are not multipart/form-data', async () => {
    const caller = newCaller();
    expectError(await service.post('/v1/results', { source_id: 'x', scan_type: 'NMAP' }, { key: caller.key }), 400, /multipart\/form-data/);
    expectError(
      await service.request('POST', '/v1/results', { key: caller.key, rawBody: 'x', contentType: 'multipart/form-data' }),
      400,
      /multipart\/form-data with a boundary/,
    );
    await expectNothingStored(caller);
  });

  it('needs an API key before it reads anything', async () => {
    expectError(await service.request('POST', '/v1/results', { key: null, formData: formOf({ scan_type: 'NMAP' }, [{ content: NMAP_SCANME }]) }), 401);
  });
});

describe('uploading results: hostile files', () => {
  const nmapWith = (body: string) => `<?xml version="1.0"?>\n${body}`;
  const hostile: Array<[string, string, Uint8Array | string, RegExp]> = [
    [
      'XML whose DOCTYPE declares an external entity',
      'NMAP',
      nmapWith('<!DOCTYPE nmaprun [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><nmaprun>&xxe;</nmaprun>'),
      /DOCTYPE|entit/i,
    ],
    [
      'an entity expansion bomb',
      'OPENVAS',
      nmapWith(
        `<!DOCTYPE report [<!ENTITY a "${'x'.repeat(100)}">${Array.from({ length: 9 }, (_, i) => `<!ENTITY ${'b'.repeat(i + 1)} "${(i === 0 ? '&a;' : `&${'b'.repeat(i)};`).repeat(10)}">`).join('')}]><report>&bbbbbbbbb;</report>`,
      ),
      /DOCTYPE|entit/i,
    ],
    ['XML nested 100000 levels deep', 'NMAP', nmapWith(`<nmaprun>${'<host>'.repeat(100_000)}`), /deep|nest/i],
    ['truncated XML', 'NMAP', NMAP_SCANME.subarray(0, Math.floor(NMAP_SCANME.length / 2)), /./],
    [
      'bytes that are not UTF-8',
      'NMAP',
      Buffer.concat([NMAP_SCANME.subarray(0, 200), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), NMAP_SCANME.subarray(200)]),
      /UTF-8/,
    ],
    ['JSON that is not a ZAP report', 'OWASP_ZAP', JSON.stringify({ site: 'not an array', alerts: [] }), /ZAP/],
    ['JSON nested 100000 levels deep', 'OWASP_ZAP', '['.repeat(100_000), /deep|nest/i],
    ['a ZAP report uploaded as nmap', 'NMAP', ZAP_EXAMPLE, /nmap/i],
    ['an nmap file uploaded as a ZAP report', 'OWASP_ZAP', NMAP_SCANME, /JSON|ZAP/],
    ['an OpenVAS report uploaded as nmap', 'NMAP', OPENVAS_REPORT, /nmap/i],
    ['an empty file', 'NMAP', '', /empty/],
  ];
  for (const [what, scanType, content, message] of hostile) {
    it(`refuses ${what} with 400, storing nothing`, async () => {
      const caller = newCaller();
      const folders = resultFolders();
      const response = await upload(caller, { source_id: await createSource(caller), scan_type: scanType, target: 'https://www.example.com' }, { content });
      expectError(response, 400, message);
      await expectNothingStored(caller);
      expect(resultFolders()).to.deep.equal(folders);
    });
  }

  it('refuses a malformed multipart body with 400', async () => {
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const unfinished = multipart(
      'b0undary',
      [
        { name: 'source_id', value: sourceId },
        { name: 'file', value: NMAP_SCANME, filename: 'scan.xml' },
      ],
      false,
    );
    const garbledHeader = Buffer.from(`--b0undary\r\nContent-Disposition form-data name=source_id\r\n${'x'.repeat(20_000)}`);
    for (const body of [unfinished, garbledHeader, Buffer.from('no boundary anywhere')]) {
      const response = await service.request('POST', '/v1/results', { key: caller.key, rawBody: body, contentType: 'multipart/form-data; boundary=b0undary' });
      expectError(response, 400, /malformed|required/);
    }
    await expectNothingStored(caller);
  });

  it('refuses a 26 MiB file while it streams, before the request ends, with memory bounded', async function () {
    this.timeout(120_000);
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const folders = resultFolders();
    const rssBefore = process.memoryUsage().rss;
    const response = await streamWithoutEnd(caller, sourceId, 26 * MIB);
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('the file is larger than 25 MiB, the limit for an uploaded result');
    expect(response.connection).to.equal('close');
    service.validateResponse('POST', '/v1/results', response.status, response.body);
    // The file goes to disk as it arrives and the parser holds little of it; nothing near the 26 MiB sent is kept.
    expect(process.memoryUsage().rss - rssBefore).to.be.below(160 * MIB);
    await expectNothingStored(caller);
    // The 25 MiB written before the refusal are removed with their folder.
    expect(resultFolders()).to.deep.equal(folders);
  });
});

describe('uploading results: the file on disk', () => {
  it('writes the file to its scan folder as it arrives, and a client that goes away mid-upload leaves nothing behind', async function () {
    this.timeout(60_000);
    const caller = newCaller();
    const sourceId = await createSource(caller);
    const folders = resultFolders();
    const boundary = 'going-away';
    const head = multipart(
      boundary,
      [
        { name: 'source_id', value: sourceId },
        { name: 'scan_type', value: 'NMAP' },
      ],
      false,
    );
    const fileHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="scan.xml"\r\n\r\n<nmaprun>`);
    const req = request(`${service.baseUrl}/v1/results`, {
      method: 'POST',
      headers: { 'X-SERVICE-API-KEY': caller.key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('error', () => {});
    req.write(Buffer.concat([head, fileHead]));
    const chunk = Buffer.alloc(256 * 1024, '<x>y</x>');
    for (let index = 0; index < 16; index++) req.write(chunk);
    // The 4 MiB sent are on disk under the temporary name while the request is still open.
    const partial = await probeUntil(() => {
      const added = resultFolders().filter((folder) => !folders.includes(folder));
      if (added.length !== 1) return undefined;
      const path = join(service.settings.dataDir, 'results', added[0]!, 'upload.partial');
      return existsSync(path) && statSync(path).size >= 4 * MIB ? path : undefined;
    });
    expect(partial).to.not.equal(undefined);
    req.destroy();
    expect(await probeUntil(() => (resultFolders().length === folders.length ? true : undefined)), 'the folder is removed').to.equal(true);
    expect(resultFolders()).to.deep.equal(folders);
    await expectNothingStored(caller);
  });
});

/**
 * Sends a multipart upload whose file part is `bytes` long and never ends
 * the request: a server that waited for the whole body would never answer.
 */
function streamWithoutEnd(caller: Caller, sourceId: string, bytes: number): Promise<{ status: number; body: any; connection: string | undefined }> {
  const boundary = 'streaming-boundary';
  const head = multipart(
    boundary,
    [
      { name: 'source_id', value: sourceId },
      { name: 'scan_type', value: 'NMAP' },
    ],
    false,
  );
  const fileHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.xml"\r\n\r\n<nmaprun>`);
  const chunk = Buffer.alloc(256 * 1024, '<x>y</x>');
  return new Promise((resolve, reject) => {
    const req = request(`${service.baseUrl}/v1/results`, {
      method: 'POST',
      headers: { 'X-SERVICE-API-KEY': caller.key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.on('data', (data: Buffer) => (text += data.toString('utf8')));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), connection: res.headers.connection });
      });
    });
    // Writing after the server closed the connection fails; only an answer matters.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    req.write(Buffer.concat([head, fileHead]));
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}
