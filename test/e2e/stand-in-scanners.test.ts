/**
 * Real scans that find something must end SUCCEEDED (issue 19), and scanners
 * reach only the addresses Vigil checked (issue 16, item 7). The Scan
 * controller drives the embedded runtime's real process runner with the real
 * scanner definitions; sslyze, ZAP and nuclei are the stand-ins in
 * test/support/stand-in-scanners, which behave as the real programs do on
 * those points (each is checked on its own below), and nmap is the real one.
 *
 * The resolver answers 127.0.0.1 (allowed in this lab) for lab.example.com
 * the first time and a private address afterwards: a scanner that resolved
 * the name again, through Vigil or through DNS, would not reach the lab.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { FakeTimers } from '../support/fake-timers.js';
import type { HostResolver } from '../../src/app/ports.js';
import { loadSettings, scannerEnvironment } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { ScanType } from '../../src/domain/risks/finding.js';
import { scannerFor, type ScannerDefinition } from '../../src/domain/scanners/index.js';
import { NUCLEI_TEMPLATES_VERSION } from '../../src/domain/scanners/images.js';
import { zapAutomationPlan } from '../../src/domain/scanners/zap-plan.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { composeCore, launchOptions } from '../../src/main/composition-root.js';
import { ProcessWorkloadRunner } from '../../src/runtime/embedded/process-runner.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';

const STAND_INS = fileURLToPath(new URL('../support/stand-in-scanners/', import.meta.url));
const LAB_NAME = 'lab.example.com';

/** The real definition, with its local program taken from the stand-ins (nmap stays the real one). */
function withStandIn(type: ScanType): ScannerDefinition {
  const real = scannerFor(type);
  if (type === 'NMAP') return real;
  return {
    ...real,
    local(input) {
      const command = real.local(input);
      return command && { ...command, program: join(STAND_INS, command.program) };
    },
  };
}

/** First answer: the lab (allowed); every later one: a private address, as a rebinding name would give. */
function rebindingResolver(names: Record<string, string>): HostResolver & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    async resolve4(host: string) {
      const first = !lookups.includes(host);
      lookups.push(host);
      if (names[host] === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return first ? [names[host]!] : ['10.0.0.5'];
    },
  };
}

/** A web server on loopback: 200 on the paths given, 404 elsewhere. */
async function webServer(okPaths: string[]): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    response.writeHead(okPaths.includes(request.url ?? '') ? 200 : 404, { 'content-type': 'text/html' });
    response.end('<html><body>lab</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Runs a stand-in directly, as a check that it behaves like the real scanner (asynchronously: the lab server answers from this process). */
function runStandIn(program: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(STAND_INS, program), args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('real scans with findings end SUCCEEDED, at the checked addresses (embedded runtime, stand-in scanners)', function () {
  this.timeout(120_000);
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let web: { server: Server; port: number };
  let templatesDir: string;

  beforeEach(async () => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
    account = core.accounts.createAccount({ name: 'acme' }).account;
    web = await webServer(['/']);
    templatesDir = join(dir.path, 'nuclei-templates');
  });
  afterEach(async () => {
    await new Promise((resolve) => web.server.close(resolve));
    core.db.close();
    dir.remove();
  });

  function installTemplates(): void {
    mkdirSync(join(templatesDir, 'http'), { recursive: true });
    writeFileSync(join(templatesDir, 'http', 'stand-in-check.yaml'), 'id: stand-in-check\n');
    writeFileSync(join(templatesDir, '.vigil-templates-version'), `${NUCLEI_TEMPLATES_VERSION}\n`);
  }

  async function runScan(type: ScanType, targets: string[], resolver: HostResolver): Promise<Scan> {
    const runner = new ProcessWorkloadRunner({
      workDir: join(dir.path, 'work'),
      scannerFor: withStandIn,
      deadlineMs: 100_000,
      environment: scannerEnvironment(),
      nucleiTemplatesDir: templatesDir,
      launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })),
    });
    const controller = new ScanReconciler({
      scans: core.scanRepository,
      accounts: core.accountRepository,
      runner,
      resolver,
      resultFiles: core.resultFiles,
      history: core.history,
      staging: core.staging,
      clock: { now: () => new Date() },
      timers: new FakeTimers(),
      maxConcurrentScans: 10,
      allowTargets: parseCidrList('127.0.0.0/8'),
      onError: (key, error) => {
        throw new Error(`reconcile of ${key} failed: ${String(error)}`);
      },
    });
    const scan = core.scans.start(account, { type, targets })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    await waitFor(
      () => runner.observe(scan.id),
      (status) => status.phase !== 'Running',
      `the ${type} scanner to exit`,
    );
    await controller.reconcile(controller.keyOf(scan)!);
    return core.scans.get(account, scan.id);
  }

  // Through the read path GET /v1/results uses: a small output is kept in its result row, a larger one on disk.
  const resultText = async (scan: Scan) => {
    const { file, content } = await core.scans.openResult(account, scan.results[0]!.resultId);
    expect(file.fileName).to.equal(scannerFor(scan.type).outputs[0]!.file);
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  };
  const lastCondition = (scan: Scan) => scan.conditions.at(-1)!;

  describe('SSLYZE', () => {
    it('the stand-in exits 1 on a weak server unless --mozilla_config=disable, as sslyze does, and writes its JSON either way', async () => {
      const out = join(dir.path, 'direct.json');
      const endpoint = `${LAB_NAME}:${web.port}{127.0.0.1}`;
      const checked = await runStandIn('sslyze', [`--json_out=${out}`, endpoint]);
      expect(checked.status, checked.stderr).to.equal(1);
      expect(checked.stdout).to.include('FAILED - Not compliant');
      expect(JSON.parse(readFileSync(out, 'utf8')).server_scan_results).to.have.length(1);
      expect((await runStandIn('sslyze', ['--mozilla_config=disable', `--json_out=${out}`, endpoint])).status).to.equal(0);
    });

    it('a weak TLS server: SUCCEEDED with its findings, scanned at the checked address with the name kept for SNI', async () => {
      const resolver = rebindingResolver({ [LAB_NAME]: '127.0.0.1' });
      const scan = await runScan('SSLYZE', [`https://${LAB_NAME}:${web.port}/`], resolver);
      expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
      expect(scan.risks.newOpen).to.not.be.empty;
      const server = JSON.parse(await resultText(scan)).server_scan_results[0];
      expect(server.server_location).to.include({ hostname: LAB_NAME, ip_address: '127.0.0.1', port: web.port });
      expect(server.network_configuration.tls_server_name_indication).to.equal(LAB_NAME);
      expect(resolver.lookups).to.deep.equal([LAB_NAME]);
    });

    it("a server sslyze cannot reach becomes a skipped target with sslyze's reason; the others keep their findings", async () => {
      const closed = await webServer([]);
      const closedPort = closed.port;
      await new Promise((resolve) => closed.server.close(resolve));
      const resolver = rebindingResolver({ [LAB_NAME]: '127.0.0.1', 'down.example.com': '127.0.0.2' });
      const scan = await runScan('SSLYZE', [`https://${LAB_NAME}:${web.port}/`, `https://down.example.com:${closedPort}/`], resolver);
      expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
      expect(scan.resolvedTargets.map((target) => target.target)).to.deep.equal([`https://${LAB_NAME}:${web.port}/`]);
      expect(scan.skippedTargets).to.have.length(1);
      expect(scan.skippedTargets[0]!.skippedReason).to.match(
        new RegExp(`^sslyze could not connect to down\\.example\\.com:${closedPort}: sslyze\\.errors\\.ConnectionToServerFailed`),
      );
      expect(scan.risks.newOpen).to.not.be.empty;
    });
  });

  describe('OWASP_ZAP', () => {
    const planFile = (url: string, withExitStatus: boolean) => {
      const plan = zapAutomationPlan({ targetUrl: url, active: false, reportDir: dir.path, reportFile: 'direct.json' });
      const text = withExitStatus ? plan : plan.slice(0, plan.indexOf('  - type: "exitStatus"'));
      const file = join(dir.path, withExitStatus ? 'with-exit.yaml' : 'without-exit.yaml');
      writeFileSync(file, text);
      return file;
    };

    it('the stand-in exits 2 when the spider meets a 404 unless the plan ends with exitStatus, as ZAP does', async () => {
      const hosts = join(dir.path, 'hosts');
      writeFileSync(hosts, `127.0.0.1 ${LAB_NAME}\n`);
      const env = { JAVA_TOOL_OPTIONS: `-Djdk.net.hosts.file=${hosts}` };
      const url = `http://${LAB_NAME}:${web.port}/missing`;
      const warned = await runStandIn('zap.sh', ['-cmd', '-autorun', planFile(url, false)], env);
      expect(warned.status, warned.stderr).to.equal(2);
      expect((await runStandIn('zap.sh', ['-cmd', '-autorun', planFile(url, true)], env)).status).to.equal(0);
      // An error (here: a name the hosts file does not hold) still fails the plan.
      expect((await runStandIn('zap.sh', ['-cmd', '-autorun', planFile(`http://elsewhere.example.com:${web.port}/`, true)], env)).status).to.equal(1);
    });

    it('a spider start URL answering 404 (a plan warning): SUCCEEDED with the alerts, the name pinned to the checked address', async () => {
      const resolver = rebindingResolver({ [LAB_NAME]: '127.0.0.1' });
      const scan = await runScan('OWASP_ZAP', [`http://${LAB_NAME}:${web.port}/missing`], resolver);
      expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
      expect(scan.risks.newOpen).to.have.length(1);
      const report = JSON.parse(await resultText(scan));
      expect(report.site[0]['@host']).to.equal(LAB_NAME);
      expect(resolver.lookups).to.deep.equal([LAB_NAME]);
    });
  });

  describe('NUCLEI', () => {
    it('the stand-in fails without templates, as nuclei does offline', async () => {
      const list = join(dir.path, 'targets.txt');
      writeFileSync(list, `http://127.0.0.1:${web.port}/\n`);
      const run = await runStandIn('nuclei', ['-duc', '-l', list, '-jsonl', '-o', join(dir.path, 'out.jsonl')]);
      expect(run.status).to.equal(1);
      expect(run.stderr).to.include('no templates provided for scan');
    });

    it('with pinned templates and no egress: SUCCEEDED with findings at the checked address, and the templates version on the Scan', async () => {
      installTemplates();
      const resolver = rebindingResolver({ [LAB_NAME]: '127.0.0.1' });
      const scan = await runScan('NUCLEI', [`http://${LAB_NAME}:${web.port}/`], resolver);
      expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
      expect(scan.risks.newOpen).to.have.length(1);
      const finding = JSON.parse((await resultText(scan)).split('\n')[0]!);
      expect(finding).to.include({ 'template-id': 'stand-in-check', ip: '127.0.0.1', host: `http://${LAB_NAME}:${web.port}/` });
      expect(lastCondition(scan).message).to.equal(
        `the scanner finished and its results are recorded; it ran with nuclei-templates ${NUCLEI_TEMPLATES_VERSION}`,
      );
      expect(resolver.lookups).to.deep.equal([LAB_NAME]);
    });

    it('without templates: FAILED before nuclei starts, saying where they belong and how to get a pinned release', async () => {
      const scan = await runScan('NUCLEI', [`http://${LAB_NAME}:${web.port}/`], rebindingResolver({ [LAB_NAME]: '127.0.0.1' }));
      expect(scan.state).to.equal('FAILED');
      expect(lastCondition(scan)).to.include({ reason: 'ScannerPrerequisiteMissing' });
      expect(lastCondition(scan).message).to.include(`nuclei has no templates: ${templatesDir} does not exist`);
      expect(lastCondition(scan).message).to.include(`git clone --depth 1 --branch ${NUCLEI_TEMPLATES_VERSION}`);
    });
  });

  describe('NMAP (the real nmap)', () => {
    it('scans the checked address, not the name: the host in its XML is the lab address', async () => {
      const resolver = rebindingResolver({ [LAB_NAME]: '127.0.0.1' });
      const scan = await runScan('NMAP', [LAB_NAME], resolver);
      expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
      const xml = await resultText(scan);
      expect(xml).to.match(/<address addr="127\.0\.0\.1" addrtype="ipv4"\/>/);
      expect(xml).to.not.include(LAB_NAME);
      expect(resolver.lookups).to.deep.equal([LAB_NAME]);
    });
  });
});
