import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nock from 'nock';
import { runScannerCommand, ScannerNotConfiguredError } from '../../src/cli/scanner.js';
import { loadNessusSettings, SettingsError } from '../../src/config/settings.js';
import { createNessusParser } from '../../src/parsers/nessus.js';
import { scanProgress } from '../../src/scanners/nessus-driver.js';
import { parseWhole, readExpected, readFixture } from '../parsers/fixture-expectations.js';
import { throwawayCertificate } from '../support/fake-gmp-server.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = 'pytenable-nessus-example.nessus';
const REPORT = readFixture('nessus', FIXTURE);
const NESSUS = 'https://nessus.example:8834';
const KEYS = { access: 'a1b2c3d4access', secret: 'e5f6a7b8secret' };
const API_KEYS_HEADER = `accessKey=${KEYS.access}; secretKey=${KEYS.secret}`;
const BASIC_TEMPLATE = '731a8e52-3ea6-a291-ec0a-d2ff0619c19d7bd788d6be818b65';
const HOSTS = ['192.0.2.10', 'scanme.example.com'];
const ENV = { VIGIL_NESSUS_URL: `${NESSUS}/`, VIGIL_NESSUS_ACCESS_KEY: KEYS.access, VIGIL_NESSUS_SECRET_KEY: KEYS.secret };

/** A clock that moves only when the command sleeps; `onSleep` may stop the command. */
function fakeTime(onSleep?: (count: number) => void) {
  let now = Date.parse('2026-03-01T12:00:00Z');
  const sleeps: number[] = [];
  return {
    clock: { now: () => new Date(now) },
    sleep: async (ms: number, signal?: AbortSignal) => {
      sleeps.push(ms);
      onSleep?.(sleeps.length);
      signal?.throwIfAborted();
      now += ms;
    },
    sleeps,
  };
}

/** The Nessus API on nock, requiring the API keys on every request and recording the order of requests. */
function nessusApi() {
  const scope = nock(NESSUS, { reqheaders: { 'x-apikeys': API_KEYS_HEADER, accept: 'application/json' } });
  const requests: string[] = [];
  scope.on('request', (request: { method: string; path: string }) => requests.push(`${request.method} ${request.path}`));
  return { scope, requests };
}

describe('vigil scanner nessus', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;

  before(() => {
    if (!nock.isActive()) nock.activate();
  });
  beforeEach(() => {
    dir = tempDir();
    nock.disableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
    dir.remove();
  });

  function scan(env: Record<string, string>, options: { extraArgs?: string[]; onSleep?: (count: number, stop: () => void) => void } = {}) {
    const controller = new AbortController();
    const time = fakeTime((count) => options.onSleep?.(count, () => controller.abort()));
    let stdout = '';
    const output = join(dir.path, 'report.nessus');
    const run = runScannerCommand(['nessus', '--output', output, ...(options.extraArgs ?? []), '--', ...HOSTS], {
      env,
      stdout: { write: (text: string) => (stdout += text) },
      clock: time.clock,
      sleep: time.sleep,
      signal: controller.signal,
    });
    return { run, output, stdout: () => stdout, sleeps: time.sleeps };
  }

  const failure = (run: Promise<number>) =>
    run.then(
      () => undefined,
      (caught: Error) => caught,
    );

  it('creates a scan from the basic template, launches and follows it, exports, downloads and deletes it', async () => {
    const { scope, requests } = nessusApi();
    scope
      .get('/editor/scan/templates')
      .reply(200, {
        templates: [
          { uuid: 'ad629e16-03b6-8c1d-cef6-ef8c9dd3c658d24bd260ef5f9e66', name: 'advanced' },
          { uuid: BASIC_TEMPLATE, name: 'basic', title: 'Basic Network Scan' },
        ],
      })
      .post('/scans', {
        uuid: BASIC_TEMPLATE,
        settings: { name: 'vigil 2026-03-01T12:00:00.000Z', text_targets: '192.0.2.10,scanme.example.com', enabled: false },
      })
      .matchHeader('content-type', 'application/json')
      .reply(200, { scan: { id: 42, uuid: 'template-00000000-0000-0000-0000-000000000000', name: 'vigil' } })
      .post('/scans/42/launch', (body) => body === '' || Object.keys(body as object).length === 0)
      .reply(200, { scan_uuid: '6f7a4a4c-1cb1-4bcb-9c43-1ed1a9d1e2bd' })
      .get('/scans/42')
      .reply(200, { info: { status: 'pending' }, hosts: [] })
      .get('/scans/42')
      .reply(200, { info: { status: 'running' }, hosts: [{ host_id: 2, scanprogresscurrent: 0, scanprogresstotal: 100 }] })
      .get('/scans/42')
      .reply(200, {
        info: { status: 'running' },
        hosts: [
          { host_id: 2, scanprogresscurrent: 30, scanprogresstotal: 100 },
          { host_id: 3, scanprogresscurrent: 50, scanprogresstotal: 100 },
        ],
      })
      .get('/scans/42')
      .reply(200, { info: { status: 'completed' }, hosts: [] })
      .post('/scans/42/export', { format: 'nessus' })
      .matchHeader('content-type', 'application/json')
      .reply(200, { file: 1234, token: 'download-token' })
      .get('/scans/42/export/1234/status')
      .reply(200, { status: 'loading' })
      .get('/scans/42/export/1234/status')
      .reply(200, { status: 'loading' })
      .get('/scans/42/export/1234/status')
      .reply(200, { status: 'ready' })
      .get('/scans/42/export/1234/download')
      .reply(200, REPORT, { 'Content-Type': 'application/octet-stream' })
      .delete('/scans/42')
      .reply(200);

    const { run, output, stdout, sleeps } = scan(ENV);
    expect(await run).to.equal(0);

    expect(scope.isDone(), `pending: ${scope.pendingMocks().join(', ')}`).to.equal(true);
    expect(requests).to.deep.equal([
      'GET /editor/scan/templates',
      'POST /scans',
      'POST /scans/42/launch',
      'GET /scans/42',
      'GET /scans/42',
      'GET /scans/42',
      'GET /scans/42',
      'POST /scans/42/export',
      'GET /scans/42/export/1234/status',
      'GET /scans/42/export/1234/status',
      'GET /scans/42/export/1234/status',
      'GET /scans/42/export/1234/download',
      'DELETE /scans/42',
    ]);
    expect(sleeps).to.deep.equal([1_000, 2_000, 5_000, 1_000, 2_000]);
    expect(stdout().split('\n').filter(Boolean)).to.deep.equal(['vigil-scanner progress 0%', 'vigil-scanner progress 40%', 'vigil-scanner progress 100%']);
    const written = readFileSync(output);
    expect(written.equals(REPORT)).to.equal(true);
    expect(parseWhole(createNessusParser(), written).findings).to.have.length(readExpected('nessus', FIXTURE).findings);
    expect(readdirSync(dir.path)).to.deep.equal(['report.nessus']);
  });

  it('uses VIGIL_NESSUS_TEMPLATE_UUID without looking the template up', async () => {
    const { scope, requests } = nessusApi();
    const template = 'e9cfb74f-947b-8fa7-f0c7-f3fbbe1c520a878248c99a5ba89c';
    scope
      .post('/scans', (body: { uuid?: string }) => body.uuid === template)
      .reply(200, { scan: { id: 7 } })
      .post('/scans/7/launch')
      .reply(200, {})
      .get('/scans/7')
      .reply(200, { info: { status: 'completed', progress: 100 } })
      .post('/scans/7/export')
      .reply(200, { file: '99' })
      .get('/scans/7/export/99/status')
      .reply(200, { status: 'ready' })
      .get('/scans/7/export/99/download')
      .reply(200, REPORT)
      .delete('/scans/7')
      .reply(200);
    expect(await scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: template }).run).to.equal(0);
    expect(scope.isDone()).to.equal(true);
    expect(requests[0]).to.equal('POST /scans');
  });

  it('fails with one sentence naming the variables when the server refuses the API keys (401)', async () => {
    const { scope } = nessusApi();
    scope.get('/editor/scan/templates').reply(401, { error: 'Invalid Credentials' });
    const { run, output } = scan(ENV);
    const error = await failure(run);
    expect(error?.message).to.equal(
      'the Nessus server refused the API keys (401 on GET /editor/scan/templates: Invalid Credentials); check VIGIL_NESSUS_ACCESS_KEY and VIGIL_NESSUS_SECRET_KEY',
    );
    expect(error?.message).not.to.include(KEYS.secret);
    expect(existsSync(output)).to.equal(false);
    expect(scope.isDone()).to.equal(true);
  });

  it('fails when the export is not ready by the --timeout deadline, and deletes the scan', async () => {
    const { scope } = nessusApi();
    scope
      .post('/scans')
      .reply(200, { scan: { id: 5 } })
      .post('/scans/5/launch')
      .reply(200, {})
      .get('/scans/5')
      .reply(200, { info: { status: 'completed' } })
      .post('/scans/5/export')
      .reply(200, { file: 77 })
      .get('/scans/5/export/77/status')
      .times(1000)
      .reply(200, { status: 'loading' })
      .delete('/scans/5')
      .reply(200);
    const { run, output, sleeps } = scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }, { extraArgs: ['--timeout', '120'] });
    const error = await failure(run);
    expect(error?.message).to.equal('the .nessus export did not finish within 120 s (--timeout)');
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).to.equal(120_000);
    expect(scope.pendingMocks()).to.deep.equal([`GET ${NESSUS}/scans/5/export/77/status`]);
    expect(existsSync(output)).to.equal(false);
  });

  it('fails naming the status when the scan is canceled, and deletes it without stopping it', async () => {
    const { scope, requests } = nessusApi();
    scope
      .post('/scans')
      .reply(200, { scan: { id: 8 } })
      .post('/scans/8/launch')
      .reply(200, {})
      .get('/scans/8')
      .reply(200, { info: { status: 'canceled' } })
      .delete('/scans/8')
      .reply(200);
    const error = await failure(scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }).run);
    expect(error?.message).to.equal("the Nessus scan 8 ended as 'canceled' before it completed");
    expect(requests.slice(-1)).to.deep.equal(['DELETE /scans/8']);
    expect(scope.isDone()).to.equal(true);
  });

  it('stops and deletes the scan when the command is stopped (SIGTERM)', async () => {
    const { scope, requests } = nessusApi();
    scope
      .post('/scans')
      .reply(200, { scan: { id: 9 } })
      .post('/scans/9/launch')
      .reply(200, {})
      .get('/scans/9')
      .reply(200, { info: { status: 'running' } })
      .post('/scans/9/stop')
      .reply(200)
      .delete('/scans/9')
      .reply(200);
    const error = await failure(scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }, { onSleep: (_count, stop) => stop() }).run);
    expect(error?.message).to.equal('the NESSUS scan was stopped before it finished, and no report was written');
    expect(requests.slice(-2)).to.deep.equal(['POST /scans/9/stop', 'DELETE /scans/9']);
  });

  it('says which edition is needed when the server refuses API scans (Nessus Professional and Expert: 412)', async () => {
    const { scope } = nessusApi();
    scope.post('/scans').reply(412, { error: 'API is not available' });
    const error = await failure(scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }).run);
    expect(error?.message).to.equal(
      'the Nessus server refuses to create scans over its API (412 on POST /scans: API is not available): ' +
        'Nessus Professional and Expert allow no API scans (pyTenable issues 757 and 840); NESSUS scans need a Tenable edition that does, such as Nessus Manager',
    );
  });

  it('says the same when the launch is refused, and deletes the scan it created', async () => {
    const { scope, requests } = nessusApi();
    scope
      .post('/scans')
      .reply(200, { scan: { id: 9 } })
      .post('/scans/9/launch')
      .reply(412, { error: 'API is not available' })
      .delete('/scans/9')
      .reply(200);
    const error = await failure(scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }).run);
    expect(error?.message).to.match(
      /^the Nessus server refuses to run scans over its API \(412 on POST \/scans\/9\/launch: API is not available\): Nessus Professional and Expert/,
    );
    expect(requests.at(-1)).to.equal('DELETE /scans/9');
  });

  it('reports any other refusal with the status and the error Nessus gave', async () => {
    const { scope } = nessusApi();
    scope.post('/scans').reply(403, { error: 'You do not have permission' });
    const error = await failure(scan({ ...ENV, VIGIL_NESSUS_TEMPLATE_UUID: BASIC_TEMPLATE }).run);
    expect(error?.message).to.equal('the Nessus server answered 403 to POST /scans: You do not have permission');
  });

  it('names the variables to set when no Nessus server is configured (exit 1, not 2)', async () => {
    const error = await failure(scan({}).run);
    expect(error).to.be.instanceOf(ScannerNotConfiguredError);
    expect(error?.message).to.equal(
      'NESSUS scans need a Nessus server: set VIGIL_NESSUS_URL (https://host:8834), VIGIL_NESSUS_ACCESS_KEY and VIGIL_NESSUS_SECRET_KEY',
    );
    const partial = await failure(scan({ VIGIL_NESSUS_URL: NESSUS, VIGIL_NESSUS_ACCESS_KEY: 'a' }).run);
    expect(partial?.message).to.equal('NESSUS scans need a Nessus server: set VIGIL_NESSUS_SECRET_KEY');
  });

  describe('settings', () => {
    it('refuses a URL that is not https://', () => {
      expect(() => loadNessusSettings({ ...ENV, VIGIL_NESSUS_URL: 'http://nessus.example:8834' })).to.throw(
        SettingsError,
        'VIGIL_NESSUS_URL must be an https:// URL',
      );
    });
    it('refuses a key that would forge the X-ApiKeys header, without printing it', () => {
      expect(() => loadNessusSettings({ ...ENV, VIGIL_NESSUS_SECRET_KEY: 'abc; accessKey=x' })).to.throw(
        SettingsError,
        "VIGIL_NESSUS_SECRET_KEY must be an API key of printable characters without ';'",
      );
    });
    it('drops a trailing slash from the URL', () => {
      expect(loadNessusSettings(ENV).url).to.equal(NESSUS);
    });
  });

  it('reads progress from info.progress, else from the mean of the hosts', () => {
    expect(scanProgress({ info: { progress: 37 } })).to.equal(37);
    expect(
      scanProgress({
        hosts: [
          { scanprogresscurrent: 10, scanprogresstotal: 20 },
          { scanprogresscurrent: 0, scanprogresstotal: 100 },
        ],
      }),
    ).to.equal(25);
    expect(scanProgress({ info: { status: 'running' }, hosts: [] })).to.equal(undefined);
  });

  describe('the vigil command, as a child process, against an HTTPS server', () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      server = undefined;
    });

    async function fakeNessus(certificate: { key: string; cert: string }, seen: string[]): Promise<number> {
      let polls = 0;
      const routes: Record<string, (request: IncomingMessage) => [number, unknown]> = {
        'GET /editor/scan/templates': () => [200, { templates: [{ uuid: BASIC_TEMPLATE, name: 'basic' }] }],
        'POST /scans': () => [200, { scan: { id: 3 } }],
        'POST /scans/3/launch': () => [200, { scan_uuid: 'u' }],
        'GET /scans/3': () => [200, polls++ === 0 ? { info: { status: 'running', progress: 50 } } : { info: { status: 'completed' } }],
        'POST /scans/3/export': () => [200, { file: 11 }],
        'GET /scans/3/export/11/status': () => [200, { status: 'ready' }],
        'GET /scans/3/export/11/download': () => [200, REPORT],
        'DELETE /scans/3': () => [200, {}],
      };
      server = createServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
        request.resume();
        const route = `${request.method} ${request.url}`;
        seen.push(`${route} ${request.headers['x-apikeys'] === API_KEYS_HEADER ? 'with keys' : 'WITHOUT KEYS'}`);
        const [status, body] = routes[route]?.(request) ?? [404, { error: 'not found' }];
        response.writeHead(status, { 'Content-Type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json' });
        response.end(Buffer.isBuffer(body) ? body : JSON.stringify(body));
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      return (server.address() as { port: number }).port;
    }

    it('exits 0, prints progress lines and writes the .nessus file, trusting the CA from NODE_EXTRA_CA_CERTS', async () => {
      const certificate = throwawayCertificate(dir.path);
      const seen: string[] = [];
      const port = await fakeNessus(certificate, seen);
      const output = join(dir.path, 'report.nessus');
      const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VIGIL_NESSUS_')));
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'scanner', 'nessus', '--output', output, '--', '192.0.2.10'], {
        cwd: ROOT,
        env: {
          ...inherited,
          NODE_EXTRA_CA_CERTS: certificate.certFile,
          VIGIL_NESSUS_URL: `https://127.0.0.1:${port}`,
          VIGIL_NESSUS_ACCESS_KEY: KEYS.access,
          VIGIL_NESSUS_SECRET_KEY: KEYS.secret,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', resolve);
      });
      expect(code, stderr).to.equal(0);
      expect(stderr).to.equal('');
      expect(stdout.split('\n').filter(Boolean)).to.deep.equal(['vigil-scanner progress 50%', 'vigil-scanner progress 100%']);
      expect(readFileSync(output).equals(REPORT)).to.equal(true);
      expect(seen).to.deep.equal([
        'GET /editor/scan/templates with keys',
        'POST /scans with keys',
        'POST /scans/3/launch with keys',
        'GET /scans/3 with keys',
        'GET /scans/3 with keys',
        'POST /scans/3/export with keys',
        'GET /scans/3/export/11/status with keys',
        'GET /scans/3/export/11/download with keys',
        'DELETE /scans/3 with keys',
      ]);
    });
  });
});
