/**
 * WebScanPreparation on a real database with a stand-in replayer: which
 * scans replay a login, what they hand the workload, and how a login that
 * fails, or a session ZAP could not be given safely, skips the target.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { HostResolver, LoginOutcome, LoginReplayer } from '../../src/app/ports.js';
import { WebScanPreparation } from '../../src/app/web-scan-preparation.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { ScanType } from '../../src/domain/risks/finding.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { ZapSettingsInputValue } from '../../src/domain/scanners/zap-settings.js';
import { parseCidrList, type Cidr } from '../../src/domain/targets/ipv4.js';
import { composeCore } from '../../src/main/composition-root.js';
import { tempDir } from '../support/temp-dir.js';

const RECORDING = readFileSync(new URL('../fixtures/selenium/demo-login.side', import.meta.url));

describe('WebScanPreparation', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  const replays: string[] = [];
  let answer: LoginOutcome;
  /** DNS as the test plays it: a name not listed does not resolve. */
  let dns: Record<string, string[]>;
  let allow: readonly Cidr[];
  const resolver: HostResolver = {
    async resolve4(host) {
      const found = dns[host];
      if (found === undefined) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    },
  };
  const replayer: LoginReplayer = {
    async replay(recording, targetUrl) {
      replays.push(`${recording.testName} @ ${targetUrl}`);
      return answer;
    },
  };

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'acme', plan: 'paid' }).account;
    replays.length = 0;
    dns = {};
    allow = [];
    answer = { ok: true, session: { cookies: [{ name: 'sid', value: 'abc', domain: 'shop.example.com', path: '/' }] } };
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  function scanOf(type: ScanType, useAuthentication?: boolean, withRecording = true): Scan {
    const target = core.targets.create(account, { target: 'https://shop.example.com/', scanner_settings: { zap: { excluded_urls: ['.*/logout.*'] } } }, true);
    if (withRecording) core.targetAttachments.attachLoginRecording(account, target.id, 'login.side', RECORDING);
    return core.scans.start(account, {
      type,
      target_ids: [target.id],
      ...(useAuthentication === undefined ? {} : { use_authentication: useAuthentication }),
    })[0]!;
  }
  const resolvedOf = (scan: Scan) => scan.requestedTargets.map((target) => ({ ...target, addresses: ['93.184.216.34'] }));
  const prepare = (scan: Scan, withReplayer = true) =>
    new WebScanPreparation(core.targetRepository, withReplayer ? replayer : undefined, { resolver, allowTargets: allow }).prepare(scan, resolvedOf(scan));

  it('replays the login of an authenticated ZAP scan and hands the workload the session and the target settings', async () => {
    const scan = scanOf('OWASP_ZAP_ACTIVE');
    const prepared = await prepare(scan);
    expect(replays).to.deep.equal(['log in as alice @ https://shop.example.com/']);
    expect(prepared.ready).to.have.length(1);
    expect(prepared.inputs.session).to.deep.equal(answer.ok && answer.session);
    expect((prepared.inputs.settings as { excluded_urls: string[] }).excluded_urls).to.deep.equal(['.*/logout.*']);
    expect(prepared.conditions).to.deep.equal([
      {
        type: 'Authenticated',
        status: 'True',
        reason: 'LoginReplayed',
        message: "the login recording 'login.side' logged in to https://shop.example.com/; ZAP scans with its session (1 cookie)",
      },
    ]);
  });

  it('replays nothing with use_authentication: false, without a recording, or for other types', async () => {
    expect((await prepare(scanOf('OWASP_ZAP', false))).inputs.session).to.equal(undefined);
    expect((await prepare(scanOf('NMAP'))).inputs).to.deep.equal({});
    dir.remove();
    dir = tempDir();
    core.db.close();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'acme', plan: 'paid' }).account;
    const bare = scanOf('OWASP_ZAP', undefined, false);
    expect(bare.isAuthenticated).to.equal(false);
    expect((await prepare(bare)).inputs.session).to.equal(undefined);
    expect(replays).to.deep.equal([]);
  });

  it('skips the target as Authentication Failed when the login fails, or when its session could not reach ZAP safely', async () => {
    answer = { ok: false, message: "command 3 of test 'log in as alice', click 'id=username' failed: Timeout 15000ms exceeded." };
    const failed = await prepare(scanOf('OWASP_ZAP'));
    expect(failed.ready).to.deep.equal([]);
    expect(failed.skipped.map((target) => target.skippedReason)).to.deep.equal(['Authentication Failed']);
    expect(failed.conditions[0]).to.include({
      status: 'False',
      reason: 'LoginFailed',
      message: `the login recording 'login.side' for https://shop.example.com/ failed: ${answer.message}`,
    });
    answer = { ok: true, session: { cookies: [], authorization: 'Bearer ${HOME}' } };
    const unsafe = await prepare(scanOf('OWASP_ZAP'));
    expect(unsafe.skipped.map((target) => target.skippedReason)).to.deep.equal(['Authentication Failed']);
    expect(unsafe.conditions[0]!.message).to.match(/the Authorization header the application sent cannot be handed to ZAP/);
  });

  it('on Kubernetes (no replayer) passes the recording on to the workload instead of replaying it', async () => {
    const prepared = await prepare(scanOf('OWASP_ZAP'), false);
    expect(replays).to.deep.equal([]);
    expect(prepared.inputs.loginRecording).to.deep.equal({ fileName: 'login.side', content: RECORDING });
    expect(prepared.conditions).to.deep.equal([]);
  });

  describe("the hosts of the target's ZAP settings (issue 26)", () => {
    function zapScanWith(zap: ZapSettingsInputValue, stored?: ZapSettingsInputValue): Scan {
      const target = core.targets.create(account, { target: 'https://shop.example.com/', scanner_settings: { zap } }, true);
      // Settings written before the address rules held them are stored as they were sent.
      if (stored !== undefined) core.targetRepository.update({ ...target, zap: { ...target.zap, ...stored } });
      return core.scans.start(account, { type: 'OWASP_ZAP', target_ids: [target.id] })[0]!;
    }

    it('resolves the seed URL and included domain names and hands their checked addresses to the workload for pinning', async () => {
      dns = { 'cdn.example.com': ['93.184.216.35'], 'api.example.com': ['93.184.216.36', '93.184.216.37'] };
      const prepared = await prepare(
        zapScanWith({ seed_urls: ['https://cdn.example.com/start', 'https://shop.example.com/other'], included_domains: ['*.api.example.com', '8.8.4.4'] }),
      );
      expect(prepared.ready).to.have.length(1);
      expect(prepared.inputs.settingsHostAddresses).to.deep.equal({
        'cdn.example.com': ['93.184.216.35'],
        'api.example.com': ['93.184.216.36', '93.184.216.37'],
      });
    });

    it('leaves a name that does not resolve out of the pinned hosts, so ZAP cannot reach it either', async () => {
      const prepared = await prepare(zapScanWith({ seed_urls: ['https://nowhere.example.com/'] }));
      expect(prepared.ready).to.have.length(1);
      expect(prepared.inputs.settingsHostAddresses).to.deep.equal({});
    });

    it('skips the target when a settings name resolves to a private address, naming the host and the rule but not the address, which goes to the log', async () => {
      dns = { 'cdn.example.com': ['93.184.216.35'], 'intranet.example.com': ['93.184.216.40', '10.1.2.3'] };
      const scan = zapScanWith({ seed_urls: ['https://cdn.example.com/'], included_domains: ['intranet.example.com'] });
      const prepared = await prepare(scan);
      expect(prepared.ready).to.deep.equal([]);
      expect(prepared.inputs).to.deep.equal({});
      const reason = prepared.skipped[0]!.skippedReason;
      expect(reason).to.equal(
        "scanner_settings.zap.included_domains names 'intranet.example.com', which resolves to an address in the 10.0.0.0/8 private-use (RFC 1918) range; only public addresses are scanned (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)",
      );
      expect(reason).not.to.include('10.1.2.3');
      expect(prepared.refused).to.deep.equal([{ scanId: scan.id, host: 'intranet.example.com', address: '10.1.2.3', reason }]);
      expect(replays).to.deep.equal([]);
    });

    it('scans it when VIGIL_ALLOW_TARGETS covers the address', async () => {
      dns = { 'intranet.example.com': ['10.1.2.3'] };
      allow = parseCidrList('10.0.0.0/8');
      const prepared = await prepare(zapScanWith({ seed_urls: ['https://intranet.example.com/'] }));
      expect(prepared.ready).to.have.length(1);
      expect(prepared.inputs.settingsHostAddresses).to.deep.equal({ 'intranet.example.com': ['10.1.2.3'] });
    });

    for (const [setting, value] of [
      ['seed_urls', 'http://169.254.169.254/latest/meta-data/'],
      ['seed_urls', 'http://[::1]/'],
      ['included_domains', '127.0.0.1'],
      ['included_domains', 'metadata.google.internal'],
      ['included_domains', 'not a domain'],
    ] as const) {
      it(`skips the target for a ${setting} entry ${value} stored before the rules held it, without asking DNS`, async () => {
        const prepared = await prepare(zapScanWith({}, { [setting]: [value] }));
        expect(prepared.ready).to.deep.equal([]);
        expect(prepared.skipped[0]!.skippedReason).to.match(new RegExp(`^scanner_settings\\.zap\\.${setting}:? '`));
      });
    }
  });
});
