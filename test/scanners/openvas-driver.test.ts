import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScannerCommand, ScannerNotConfiguredError } from '../../src/cli/scanner.js';
import { UsageError } from '../../src/cli/usage.js';
import { loadOpenVasSettings, SettingsError } from '../../src/config/settings.js';
import { createOpenVasParser } from '../../src/parsers/openvas.js';
import { parseWhole, readExpected, readFixture } from '../parsers/fixture-expectations.js';
import {
  DEFAULT_FAKE_CREDENTIALS,
  FAKE_GMP_IDS,
  startFakeGmpServer,
  throwawayCertificate,
  type FakeGmpOptions,
  type FakeGmpServer,
  type TaskState,
} from '../support/fake-gmp-server.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = 'defectdojo-openvas-many_vuln.xml';
/** The fixture is gvmd's <report> element followed by a newline. */
const REPORT_ELEMENT = readFixture('openvas', FIXTURE).toString('utf8').trimEnd();
const HOSTS = ['192.0.2.10', 'scanme.example.com'];
const STATES: TaskState[] = [
  { status: 'Running', progress: 0 },
  { status: 'Running', progress: 40 },
  { status: 'Running', progress: 100 },
  { status: 'Done', progress: -1 },
];
const DEFAULTS = {
  config: 'daba56c8-73ec-11df-a475-002264764cea',
  scanner: '08b69003-5fc2-4037-a479-93b440211c73',
  portList: '33d0cd82-57c6-11e1-8ed1-406186ea4fc5',
};

/** A clock that moves only when the command sleeps. */
function fakeTime() {
  let now = Date.parse('2026-03-01T12:00:00Z');
  const sleeps: number[] = [];
  return {
    clock: { now: () => new Date(now) },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
  };
}

describe('vigil scanner openvas', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  let server: FakeGmpServer | undefined;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    dir.remove();
  });

  async function startServer(options: Partial<FakeGmpOptions> = {}): Promise<FakeGmpServer> {
    server = await startFakeGmpServer({ socketPath: join(dir.path, 'gvmd.sock'), report: REPORT_ELEMENT, taskStates: STATES, ...options });
    return server;
  }

  function gmpEnv(address: string, extra: Record<string, string> = {}): Record<string, string> {
    return {
      VIGIL_OPENVAS_GMP: address,
      VIGIL_OPENVAS_USERNAME: DEFAULT_FAKE_CREDENTIALS.username,
      VIGIL_OPENVAS_PASSWORD: DEFAULT_FAKE_CREDENTIALS.password,
      ...extra,
    };
  }

  async function scan(env: Record<string, string>, extraArgs: string[] = [], stopAtSleep?: number) {
    const time = fakeTime();
    const controller = new AbortController();
    const sleep = async (ms: number, signal?: AbortSignal) => {
      if (time.sleeps.length + 1 === stopAtSleep) controller.abort();
      signal?.throwIfAborted();
      await time.sleep(ms);
    };
    let stdout = '';
    const output = join(dir.path, 'openvas.xml');
    const run = runScannerCommand(['openvas', '--output', output, ...extraArgs, '--', ...HOSTS], {
      env,
      stdout: { write: (text: string) => (stdout += text) },
      clock: time.clock,
      sleep,
      signal: controller.signal,
    });
    return { run, output, stdout: () => stdout, sleeps: time.sleeps };
  }

  const names = (fake: FakeGmpServer) => fake.commands.map((command) => command.name);
  const leftovers = () => readdirSync(dir.path).filter((name) => name !== 'gvmd.sock' && !name.endsWith('.pem'));

  it('creates a target and a task, follows the task, writes the report and deletes what it created', async () => {
    const fake = await startServer();
    const { run, output, stdout } = await scan(gmpEnv(fake.address));
    expect(await run).to.equal(0);

    expect(names(fake)).to.deep.equal([
      'authenticate',
      'create_target',
      'create_task',
      'start_task',
      'get_tasks',
      'get_tasks',
      'get_tasks',
      'get_tasks',
      'get_reports',
      'delete_task',
      'delete_target',
    ]);
    const [login, target, task, start, poll, , , , report, deleteTask, deleteTarget] = fake.commands;
    expect(login!.children['credentials/username']?.text).to.equal(DEFAULT_FAKE_CREDENTIALS.username);
    expect(login!.children['credentials/password']?.text).to.equal(DEFAULT_FAKE_CREDENTIALS.password);
    expect(target!.children.hosts?.text).to.equal('192.0.2.10,scanme.example.com');
    expect(target!.children.port_list?.attributes).to.deep.equal({ id: DEFAULTS.portList });
    expect(target!.children.name?.text).to.match(/^vigil 2026-03-01T12:00:00\.000Z [0-9a-f]{8}$/);
    expect(task!.children.config?.attributes).to.deep.equal({ id: DEFAULTS.config });
    expect(task!.children.scanner?.attributes).to.deep.equal({ id: DEFAULTS.scanner });
    expect(task!.children.target?.attributes).to.deep.equal({ id: FAKE_GMP_IDS.target });
    expect(start!.attributes).to.deep.equal({ task_id: FAKE_GMP_IDS.task });
    expect(poll!.attributes).to.deep.equal({ task_id: FAKE_GMP_IDS.task });
    expect(report!.attributes).to.deep.equal({
      report_id: FAKE_GMP_IDS.report,
      details: '1',
      ignore_pagination: '1',
      format_id: 'a994b278-1f62-11e1-96ac-406186ea4fc5',
      filter: 'apply_overrides=0 min_qod=0 rows=-1 first=1 sort-reverse=severity',
    });
    expect(deleteTask!.attributes).to.deep.equal({ task_id: FAKE_GMP_IDS.task, ultimate: '1' });
    expect(deleteTarget!.attributes).to.deep.equal({ target_id: FAKE_GMP_IDS.target, ultimate: '1' });
    expect(new Set(fake.commands.map((command) => command.connection))).to.deep.equal(new Set([1]));

    expect(stdout().split('\n').filter(Boolean)).to.deep.equal(['vigil-scanner progress 0%', 'vigil-scanner progress 40%', 'vigil-scanner progress 100%']);
    const written = readFileSync(output);
    expect(written.toString('utf8')).to.equal(REPORT_ELEMENT);
    expect(parseWhole(createOpenVasParser(), written).findings).to.have.length(readExpected('openvas', FIXTURE).findings);
    expect(leftovers()).to.deep.equal(['openvas.xml']);
  });

  it('polls quickly at first, then every 10 s', async () => {
    const running = Array.from({ length: 6 }, (_, index): TaskState => ({ status: 'Running', progress: index * 10 }));
    const fake = await startServer({ taskStates: [...running, { status: 'Done', progress: -1 }] });
    const { run, sleeps } = await scan(gmpEnv(fake.address));
    expect(await run).to.equal(0);
    expect(sleeps).to.deep.equal([1_000, 2_000, 5_000, 10_000, 10_000, 10_000]);
  });

  it('uses the scan config, scanner and port list named in the environment', async () => {
    const fake = await startServer();
    const ids = {
      config: 'a3c7a4ae-05ce-11e1-8ea4-406186ea4fc5',
      scanner: '6acd0832-df90-11e4-b9d5-28d24461215b',
      portList: '4a4717fe-57d2-11e1-9a26-406186ea4fc5',
    };
    const env = gmpEnv(fake.address, { VIGIL_OPENVAS_SCAN_CONFIG: ids.config, VIGIL_OPENVAS_SCANNER: ids.scanner, VIGIL_OPENVAS_PORT_LIST: ids.portList });
    expect(await (await scan(env)).run).to.equal(0);
    const byName = (name: string) => fake.commands.find((command) => command.name === name)!;
    expect(byName('create_target').children.port_list?.attributes.id).to.equal(ids.portList);
    expect(byName('create_task').children.config?.attributes.id).to.equal(ids.config);
    expect(byName('create_task').children.scanner?.attributes.id).to.equal(ids.scanner);
  });

  it('writes the report byte for byte when the answer arrives in small pieces with multibyte characters', async () => {
    const report = '<report id="r" format_id="x"><report id="r"><results>\r\n<result id="1"><name>Café € 😀 ümlaut</name></result></results></report></report>';
    const fake = await startServer({ report, chunkSize: 3 });
    const { run, output } = await scan(gmpEnv(fake.address));
    expect(await run).to.equal(0);
    expect(readFileSync(output).equals(Buffer.from(report))).to.equal(true);
  });

  it('fails with one sentence naming the variables when the login is refused, and creates nothing', async () => {
    const fake = await startServer({ password: 'another password' });
    const { run, output } = await scan(gmpEnv(fake.address));
    const error = await run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal(
      `the Greenbone manager at ${fake.address} refused the login (status 400: Authentication failed); check VIGIL_OPENVAS_USERNAME and VIGIL_OPENVAS_PASSWORD`,
    );
    expect(error).not.to.be.instanceOf(SettingsError);
    expect(error).not.to.be.instanceOf(UsageError);
    expect(names(fake)).to.deep.equal(['authenticate']);
    expect(existsSync(output)).to.equal(false);
  });

  it('names the variables to set when no Greenbone manager is configured (exit 1, not 2)', async () => {
    const error = await (
      await scan({})
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error).to.be.instanceOf(ScannerNotConfiguredError);
    expect(error?.message).to.equal(
      'OPENVAS scans need a Greenbone manager: set VIGIL_OPENVAS_GMP (tls://host:9390 or unix:///path/gvmd.sock), VIGIL_OPENVAS_USERNAME and VIGIL_OPENVAS_PASSWORD',
    );
    const partial = await (
      await scan({ VIGIL_OPENVAS_GMP: 'tls://gvmd.example:9390' })
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(partial?.message).to.equal('OPENVAS scans need a Greenbone manager: set VIGIL_OPENVAS_USERNAME and VIGIL_OPENVAS_PASSWORD');
  });

  it('fails clearly when gvmd closes the connection in the middle of the report, and still deletes the task and target', async () => {
    const fake = await startServer({ closeMidAnswerTo: 'get_reports', chunkSize: 16 * 1024 });
    const { run, output } = await scan(gmpEnv(fake.address));
    const error = await run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.match(
      new RegExp(`^the Greenbone manager at ${fake.address} closed the connection in the middle of its answer to <get_reports> \\(after \\d+ bytes\\)$`),
    );
    expect(existsSync(output)).to.equal(false);
    expect(leftovers()).to.deep.equal([]);
    const afterLoss = fake.commands.filter((command) => command.connection === 2);
    expect(afterLoss.map((command) => command.name)).to.deep.equal(['authenticate', 'delete_task', 'delete_target']);
  });

  it('stops and deletes the task when the scan is not done by the --timeout deadline', async () => {
    const fake = await startServer({ taskStates: [{ status: 'Running', progress: 10 }] });
    const { run, sleeps } = await scan(gmpEnv(fake.address), ['--timeout', '60']);
    const error = await run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal('the OpenVAS scan did not finish within 60 s (--timeout)');
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).to.equal(60_000);
    expect(names(fake).slice(-3)).to.deep.equal(['stop_task', 'delete_task', 'delete_target']);
  });

  it('stops and deletes the task when the command is stopped (SIGTERM)', async () => {
    const fake = await startServer({ taskStates: [{ status: 'Running', progress: 10 }] });
    const error = await (
      await scan(gmpEnv(fake.address), [], 2)
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal('the OPENVAS scan was stopped before it finished, and no report was written');
    expect(names(fake).slice(-5)).to.deep.equal(['get_tasks', 'get_tasks', 'stop_task', 'delete_task', 'delete_target']);
  });

  it('fails when the task is interrupted, naming its status', async () => {
    const fake = await startServer({
      taskStates: [
        { status: 'Running', progress: 20 },
        { status: 'Interrupted', progress: -1 },
      ],
    });
    const error = await (
      await scan(gmpEnv(fake.address))
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal("the OpenVAS task ended as 'Interrupted' before the scan was done; gvmd's log says why");
    expect(names(fake).slice(-3)).to.deep.equal(['stop_task', 'delete_task', 'delete_target']);
  });

  it("reports a refused command with gvmd's status and status text, and deletes the target it created", async () => {
    const fake = await startServer({
      answerOverride: (command) =>
        command.name === 'create_task' ? '<create_task_response status="404" status_text="Failed to find config &apos;x&apos;"/>' : undefined,
    });
    const error = await (
      await scan(gmpEnv(fake.address))
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal("the Greenbone manager refused <create_task> with status 404 (Failed to find config 'x')");
    expect(names(fake)).to.deep.equal(['authenticate', 'create_target', 'create_task', 'delete_target']);
  });

  it('refuses an answer that declares a DOCTYPE', async () => {
    const fake = await startServer({
      answerOverride: (command) =>
        command.name === 'authenticate' ? '<!DOCTYPE x [<!ENTITY big "aaaa">]><authenticate_response status="200" status_text="&big;"/>' : undefined,
    });
    const error = await (
      await scan(gmpEnv(fake.address))
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.equal(
      "the Greenbone manager's answer to <authenticate> is not acceptable XML: it declares a DOCTYPE, which GMP answers never do",
    );
  });

  it('fails with one sentence when nothing listens at VIGIL_OPENVAS_GMP', async () => {
    const address = `unix://${join(dir.path, 'nobody.sock')}`;
    const error = await (
      await scan(gmpEnv(address))
    ).run.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).to.match(new RegExp(`^could not connect to the Greenbone manager at ${address}: connect ENOENT`));
  });

  describe('over TLS', () => {
    let certificate: ReturnType<typeof throwawayCertificate>;
    beforeEach(() => {
      certificate = throwawayCertificate(dir.path);
    });

    it("verifies gvmd's certificate against VIGIL_OPENVAS_CA_FILE", async () => {
      server = await startFakeGmpServer({ tls: certificate, report: REPORT_ELEMENT, taskStates: STATES });
      expect(server.address).to.match(/^tls:\/\/127\.0\.0\.1:\d+$/);
      const { run, output } = await scan(gmpEnv(server.address, { VIGIL_OPENVAS_CA_FILE: certificate.certFile }));
      expect(await run).to.equal(0);
      expect(readFileSync(output, 'utf8')).to.equal(REPORT_ELEMENT);
    });

    it('refuses a certificate it cannot verify and says which variable to set', async () => {
      server = await startFakeGmpServer({ tls: certificate, report: REPORT_ELEMENT, taskStates: STATES });
      const error = await (
        await scan(gmpEnv(server.address))
      ).run.then(
        () => undefined,
        (caught: Error) => caught,
      );
      expect(error?.message).to.match(
        /^could not connect to the Greenbone manager at tls:\/\/127\.0\.0\.1:\d+: self[- ]signed certificate; set VIGIL_OPENVAS_CA_FILE/,
      );
      expect(server.commands).to.deep.equal([]);
    });
  });

  describe('settings', () => {
    const base = { VIGIL_OPENVAS_USERNAME: 'u', VIGIL_OPENVAS_PASSWORD: ' p ' };
    it('reads tls:// and unix:// addresses and keeps the password as given', () => {
      expect(loadOpenVasSettings({ ...base, VIGIL_OPENVAS_GMP: 'tls://gvmd.example' })).to.deep.include({
        endpoint: { kind: 'tls', host: 'gvmd.example', port: 9390 },
        password: ' p ',
        caFile: undefined,
        scanConfigId: DEFAULTS.config,
      });
      expect(loadOpenVasSettings({ ...base, VIGIL_OPENVAS_GMP: 'unix:///run/gvmd/gvmd.sock' }).endpoint).to.deep.equal({
        kind: 'unix',
        path: '/run/gvmd/gvmd.sock',
      });
    });

    for (const value of ['gvmd.example:9390', 'http://gvmd.example', 'unix://relative/path', 'tls://user:pw@gvmd.example:9390', 'tls://gvmd.example:0']) {
      it(`refuses VIGIL_OPENVAS_GMP=${value}`, () => {
        expect(() => loadOpenVasSettings({ ...base, VIGIL_OPENVAS_GMP: value })).to.throw(
          SettingsError,
          'VIGIL_OPENVAS_GMP must be tls://host:9390 or unix:///path/to/gvmd.sock',
        );
      });
    }

    it('refuses an id that is not a UUID', () => {
      expect(() => loadOpenVasSettings({ ...base, VIGIL_OPENVAS_GMP: 'tls://g', VIGIL_OPENVAS_SCAN_CONFIG: 'Full and fast' })).to.throw(
        SettingsError,
        'VIGIL_OPENVAS_SCAN_CONFIG must be the UUID of a scan config',
      );
    });
  });

  describe('the vigil command, as a child process', () => {
    function vigil(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
      const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VIGIL_OPENVAS_')));
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env: { ...inherited, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      return new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      });
    }

    it('exits 0, prints progress lines and writes the report', async () => {
      const fake = await startServer({
        taskStates: [
          { status: 'Running', progress: 40 },
          { status: 'Done', progress: -1 },
        ],
      });
      const output = join(dir.path, 'openvas.xml');
      const result = await vigil(['scanner', 'openvas', '--output', output, '--', '192.0.2.10'], gmpEnv(fake.address));
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout.split('\n').filter(Boolean)).to.deep.equal(['vigil-scanner progress 40%', 'vigil-scanner progress 100%']);
      expect(readFileSync(output, 'utf8')).to.equal(REPORT_ELEMENT);
      expect(fake.commands.find((command) => command.name === 'create_target')?.children.hosts?.text).to.equal('192.0.2.10');
    });

    it('exits 1 with one sentence when no Greenbone manager is configured', async () => {
      const result = await vigil(['scanner', 'openvas', '--output', join(dir.path, 'openvas.xml'), '--', '192.0.2.10'], {});
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(
        'vigil: OPENVAS scans need a Greenbone manager: set VIGIL_OPENVAS_GMP (tls://host:9390 or unix:///path/gvmd.sock), VIGIL_OPENVAS_USERNAME and VIGIL_OPENVAS_PASSWORD\n',
      );
      expect(result.stdout).to.equal('');
    });

    it('exits 2 for a bad command line', async () => {
      const result = await vigil(['scanner', 'openvas', '--', '192.0.2.10'], {});
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(/^vigil: --output is required: vigil scanner openvas\|nessus --output FILE/);
      expect(result.stderr.trim().split('\n')).to.have.length(1);
    });
  });
});
