/**
 * Issue 29: the dashboard overview's figures (open risks by threat level,
 * risks opened and closed per week) are counters the store keeps in the
 * transaction of each change (migration 0026), so the overview costs the
 * same whatever the account holds. After every kind of change (scans that
 * open and close risks, an OpenVAS scan gated by the account's minimum QoD,
 * acceptance, deleting a scan and a target, an import) they must equal a
 * recount of the rows, which is what the overview computed before.
 */
import { expect } from 'chai';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { HostResolver } from '../../src/app/ports.js';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { composeCore } from '../../src/main/composition-root.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { OpenRiskCounts } from '../../src/domain/targets/health-score.js';
import { weeklyChanges, type DailyChanges } from '../../src/domain/trends/weekly-changes.js';
import { DashboardService, TREND_WEEKS } from '../../src/app/dashboard-service.js';
import { SqliteDashboardReadRepository } from '../../src/store/dashboard-read-repository.js';
import { nmapReport } from '../support/nmap-report.js';
import { tempDir } from '../support/temp-dir.js';
import { FakeRunner, scriptedScanController, nmapXml, openVasXml, xmlOutput, type OpenPort } from '../support/scripted-scans.js';

const resolver: HostResolver = { resolve4: async () => ['93.184.216.34'] };
const ONE_DAY = 24 * 60 * 60 * 1000;

describe('the dashboard overview counters equal a recount after every kind of change', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let runner: FakeRunner;
  let controller: ScanReconciler;
  let dashboard: DashboardService;
  let account: Account;
  let nowMs: number;

  beforeEach(() => {
    dir = tempDir();
    nowMs = Date.parse('2026-03-02T10:00:00.000Z');
    const clock = { now: () => new Date(nowMs) };
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }), clock);
    account = core.accounts.createAccount({ name: 'acme' }).account;
    runner = new FakeRunner();
    controller = scriptedScanController(core, runner, resolver, clock);
    dashboard = new DashboardService(new SqliteDashboardReadRepository(core.db), core.scanRepository, core.scheduledScanRepository, clock);
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  /** A scan that finishes one day after the previous one, so that the trend spans days and weeks. */
  async function runScan(targets: string[], output: string, type: Scan['type'] = 'NMAP'): Promise<Scan> {
    nowMs += ONE_DAY;
    const scan = core.scans.start(account, { type, targets })[0]!;
    await controller.reconcile(controller.keyOf(scan)!);
    runner.statuses.set(scan.id, { phase: 'Succeeded', outputs: [xmlOutput(output)] });
    await controller.reconcile(controller.keyOf(scan)!);
    const done = core.scans.get(account, scan.id);
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    return done;
  }
  const nmap = (...ports: OpenPort[]) => nmapXml([{ address: '127.0.0.1', ports }]);
  const critical = (port: number): OpenPort => ({ port, vulners: [{ id: `CVE-2024-${port}`, cvss: '9.8' }] });

  /** What the overview computed before the counters: every open risk counted, every SUCCEEDED scan's lists measured. */
  function recount(): { openRisks: OpenRiskCounts; weekly: ReturnType<typeof weeklyChanges> } {
    const openRisks: OpenRiskCounts = {};
    const levels = core.db
      .prepare(
        `SELECT threat_level, COUNT(*) AS n FROM risks WHERE account_id = ? AND status = 'OPEN' AND is_accepted = 0
        AND (scan_type <> 'OPENVAS' OR qod IS NULL OR qod >= ?) GROUP BY threat_level`,
      )
      .all(account.id, account.minOpenvasQod) as Array<{ threat_level: keyof OpenRiskCounts; n: number }>;
    for (const row of levels) openRisks[row.threat_level] = row.n;
    const days = core.db
      .prepare(
        `SELECT substr(s.finished_at, 1, 10) AS day, SUM(l.list = 0) AS opened, SUM(l.list = 2) AS closed
        FROM scans s JOIN scan_risks l ON l.scan_seq = s.seq WHERE s.account_id = ? AND s.state = 'SUCCEEDED' GROUP BY day`,
      )
      .all(account.id) as DailyChanges[];
    return { openRisks, weekly: weeklyChanges(days, new Date(nowMs), TREND_WEEKS) };
  }

  function expectCountersEqualRecount(after: string): void {
    const overview = dashboard.overview(account);
    const expected = recount();
    expect(overview.openRisks, `${after}: open risks by level`).to.deep.equal(expected.openRisks);
    expect(overview.weekly, `${after}: the weekly trend`).to.deep.equal(expected.weekly);
  }

  it('scans, re-scans that close risks, the QoD gate, acceptance, deletions of a scan and a target, and an import', async () => {
    expectCountersEqualRecount('nothing yet');
    const first = await runScan(['127.0.0.1'], nmap({ port: 80 }, { port: 443 }, critical(8080), critical(8443)));
    expect(first.risks.newOpen).to.have.length(6);
    expectCountersEqualRecount('a first scan');
    const second = await runScan(['127.0.0.1'], nmap({ port: 80 }, critical(8080)));
    expect(second.risks.closed).to.have.length(3);
    expectCountersEqualRecount('a re-scan that closes risks');
    nowMs += 8 * ONE_DAY;
    await runScan(['127.0.0.1'], nmap({ port: 80 }, { port: 443 }, critical(8080)));
    expectCountersEqualRecount('a re-scan a week later that opens one again');

    const openVas = await runScan(
      ['127.0.0.1'],
      openVasXml([
        { oid: '1.3.6.1.4.1.25623.1.0.1', name: 'Below the minimum', port: '443/tcp', severity: '7.5', qod: 30 },
        { oid: '1.3.6.1.4.1.25623.1.0.2', name: 'Above the minimum', port: '443/tcp', severity: '5.0', qod: 80 },
      ]),
      'OPENVAS',
    );
    expect(openVas.risks.newOpen).to.have.length(2);
    expectCountersEqualRecount('an OpenVAS scan with a risk below the minimum QoD');
    account = { ...account, minOpenvasQod: 20 };
    expectCountersEqualRecount('the minimum QoD lowered');

    const high = core.risks.list(account, { filters: JSON.stringify({ status: ['OPEN'], 'risk_definition.threat_level': ['CRITICAL'] }) }, (risk) => risk)
      .items[0]!;
    core.risks.accept(account, high.id, 'by design');
    expectCountersEqualRecount('a risk accepted');
    core.risks.unaccept(account, high.id);
    core.risks.accept(account, high.id, 'after all');
    expectCountersEqualRecount('accepted, un-accepted, accepted again');

    core.scans.delete(account, second.id);
    expectCountersEqualRecount('the re-scan that closed risks deleted');

    nowMs += ONE_DAY;
    const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'uploads' });
    const upload = core.imports.newUpload();
    upload.useScanType('NMAP');
    upload.write(Buffer.from(nmapReport(3, 4)));
    const imported = await core.imports.importResult(account, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
    expect(imported.scan.risks.newOpen).to.have.length(12);
    expectCountersEqualRecount('an import');

    core.targets.delete(account, first.requestedTargets[0]!.targetId);
    expectCountersEqualRecount('the scanned target deleted with its risks');
    core.scans.delete(account, imported.scan.id);
    expectCountersEqualRecount('the imported scan deleted');
  });

  it('reads a few counter rows, never the risks: the overview does not depend on the account holding them', async () => {
    await runScan(['127.0.0.1'], nmap({ port: 80 }, critical(8080)));
    // A row written behind the store's back (its statements count what they insert, migration 0033): the overview does not count it.
    const risk = core.db.prepare('SELECT * FROM risks LIMIT 1').get() as Record<string, unknown>;
    core.db
      .prepare(
        `INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at, title, threat_level, definition, created_at)
      VALUES ('extra', ?, ?, 'NMAP', 'extra', 'OPEN', ?, ?, 'extra', 'HIGH', '{}', ?)`,
      )
      .run(risk.account_id, risk.target_id, risk.created_at, risk.created_at, risk.created_at);
    expect(dashboard.overview(account).openRisks.HIGH).to.equal(undefined);
    expect(recount().openRisks.HIGH).to.equal(1);
  });
});
