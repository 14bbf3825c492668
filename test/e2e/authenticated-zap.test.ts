/**
 * Authenticated web scans in the embedded runtime (issue 15): the Scan
 * controller with the real login replay (system Chromium, confined by
 * Vigil's proxy), the real process runner and the real ZAP definition, with
 * the stand-in zap.sh, which sends the replacer's headers and runs the
 * openapi job as ZAP does. The demo application logs which requests carried
 * the login's cookie and Authorization header, so the session is seen to
 * reach the scanner's requests, the API definition's operations included.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { FakeTimers } from '../support/fake-timers.js';
import { WebScanPreparation } from '../../src/app/web-scan-preparation.js';
import { loadSettings, scannerEnvironment } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { ScanType } from '../../src/domain/risks/finding.js';
import { scannerFor, type ScannerDefinition } from '../../src/domain/scanners/index.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { composeCore, launchOptions } from '../../src/main/composition-root.js';
import { ProcessWorkloadRunner } from '../../src/runtime/embedded/process-runner.js';
import { systemResolver } from '../../src/runtime/dns-resolver.js';
import { BrowserLoginReplayer } from '../../src/runtime/login-replay/browser-login.js';
import { LoginApp } from '../support/login-app.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';

const STAND_INS = fileURLToPath(new URL('../support/stand-in-scanners/', import.meta.url));
const fixture = (path: string): Buffer => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

function withStandIn(type: ScanType): ScannerDefinition {
  const real = scannerFor(type);
  return {
    ...real,
    local(input) {
      const command = real.local(input);
      return command && { ...command, program: join(STAND_INS, command.program) };
    },
  };
}

describe('authenticated ZAP scans with a recorded login (embedded runtime, real browser, stand-in zap.sh)', function () {
  this.timeout(120_000);
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let app: LoginApp;

  beforeEach(async () => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
    account = core.accounts.createAccount({ name: 'acme' }).account;
    app = await LoginApp.start();
  });
  afterEach(async () => {
    await app.stop();
    core.db.close();
    dir.remove();
  });

  function recording(password?: string): Buffer {
    const project = JSON.parse(fixture('selenium/demo-login.side').toString());
    project.url = app.url;
    if (password !== undefined) project.tests[0].commands[4].value = password;
    return Buffer.from(JSON.stringify(project));
  }

  function webTarget(options: { password?: string; definition?: boolean; seed?: boolean } = {}): string {
    const target = core.targets.create(
      account,
      { target: `${app.url}/`, ...(options.seed ? { scanner_settings: { zap: { seed_urls: [`${app.url}/seed`] } } } : {}) },
      false,
    );
    core.targetAttachments.attachLoginRecording(account, target.id, 'demo-login.side', recording(options.password));
    return target.id;
  }

  async function runScan(targetId: string, useAuthentication?: boolean): Promise<Scan> {
    const runner = new ProcessWorkloadRunner({
      workDir: join(dir.path, 'work'),
      scannerFor: withStandIn,
      deadlineMs: 100_000,
      environment: scannerEnvironment(),
      launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '', VIGIL_EMBEDDED_SCANNERS: 'local' })),
    });
    const controller = new ScanReconciler({
      scans: core.scanRepository,
      accounts: core.accountRepository,
      runner,
      resolver: systemResolver,
      resultFiles: core.resultFiles,
      history: core.history,
      staging: core.staging,
      clock: { now: () => new Date() },
      timers: new FakeTimers(),
      maxConcurrentScans: 10,
      allowTargets: parseCidrList('127.0.0.0/8'),
      preparation: new WebScanPreparation(
        core.targetRepository,
        new BrowserLoginReplayer({
          chromiumPath: '/usr/bin/chromium',
          allowTargets: parseCidrList('127.0.0.0/8'),
          resolver: systemResolver,
          commandTimeoutMs: 3000,
        }),
        { resolver: systemResolver, allowTargets: parseCidrList('127.0.0.0/8') },
      ),
      onError: (key, error) => {
        throw new Error(`reconcile of ${key} failed: ${String(error)}`);
      },
    });
    const scan = core.scans.start(account, {
      type: 'OWASP_ZAP',
      target_ids: [targetId],
      ...(useAuthentication === undefined ? {} : { use_authentication: useAuthentication }),
    })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    if (core.scans.get(account, scan.id).state === 'RUNNING') {
      await waitFor(
        () => runner.observe(scan.id),
        (status) => status.phase !== 'Running',
        'the ZAP stand-in to exit',
      );
      await controller.reconcile(controller.keyOf(scan)!);
    }
    return core.scans.get(account, scan.id);
  }

  const authentication = (scan: Scan) => scan.conditions.find((condition) => condition.type === 'Authenticated');

  it('logs in first, then ZAP crawls and imports the API definition with the session', async () => {
    const id = webTarget({ seed: true });
    await core.targetAttachments.attachApiDefinition(account, id, 'demo-shop-3.0.yaml', fixture('openapi/demo-shop-3.0.yaml'));
    const scan = await runScan(id);
    expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
    expect(scan.isAuthenticated).to.equal(true);
    expect(authentication(scan)).to.include({ status: 'True', reason: 'LoginReplayed' });
    expect(authentication(scan)!.message).to.equal(
      `the login recording 'demo-login.side' logged in to ${app.url}/; ZAP scans with its session (1 cookie and an Authorization header)`,
    );
    const afterLogin = app.requests.slice(app.requests.indexOf('POST /api/login'));
    // The seed URL (the target's own settings), the openapi job's operations and the spider, each carrying the session.
    expect(afterLogin).to.include.members(['GET /seed with session', 'GET /products with session', 'GET /products/1 with session', 'GET / with session']);
    expect(scan.risks.newOpen).to.have.length(1);
  });

  it('a wrong password skips the target as Authentication Failed, names the command, and ZAP never starts', async () => {
    const id = webTarget({ password: 'wrong' });
    const scan = await runScan(id);
    expect(scan.state).to.equal('FAILED');
    expect(scan.skippedTargets).to.deep.equal([{ targetId: id, skippedReason: 'Authentication Failed' }]);
    expect(scan.conditions.at(-1)).to.include({ reason: 'NoScannableTargets' });
    expect(authentication(scan)).to.include({ status: 'False', reason: 'LoginFailed' });
    expect(authentication(scan)!.message).to.match(
      /^the login recording 'demo-login\.side' for http:\/\/127\.0\.0\.1:\d+\/ failed: command 7 of test 'log in as alice', waitForElementVisible 'css=\.welcome' failed:/,
    );
    expect(app.requests.filter((line) => line.startsWith('GET /products') || line.endsWith('with session'))).to.deep.equal([]);
  });

  it('use_authentication: false scans without replaying the login', async () => {
    const scan = await runScan(webTarget(), false);
    expect(scan.state, JSON.stringify(scan.conditions)).to.equal('SUCCEEDED');
    expect(scan.isAuthenticated).to.equal(false);
    expect(authentication(scan)).to.equal(undefined);
    expect(app.requests).to.not.include('POST /api/login');
    expect(app.requests).to.include('GET /');
  });
});
