/**
 * Issue 17 (nmap ingest): a recording's findings are staged in the store and
 * the risks they become are written set-based, their definitions copied from
 * the staging in SQL, never parsed on the way. What must hold whatever the
 * path: every risk carries its finding's definition exactly (title, level
 * and QoD columns derived from it), a re-detection takes the new definition,
 * the first of two findings with one fingerprint on a target wins, a scan's
 * risk type is its scan's, events present the risk as stored, and the
 * staging keeps other recordings' findings when one is dropped.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { presentRisk } from '../../src/app/present/risk.js';
import { dropStaged } from '../../src/app/risk-history.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { newImportScan } from '../../src/domain/imports/import-scan.js';
import type { Finding, RiskDefinition } from '../../src/domain/risks/finding.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { Target } from '../../src/domain/targets/target.js';
import { composeCore } from '../../src/main/composition-root.js';
import { SqliteRecordingStaging } from '../../src/store/recording-staging.js';
import { tempDir } from '../support/temp-dir.js';
import { TurnCounter } from '../support/turn-counter.js';
import { handing } from '../support/risk-history.js';

function definition(title: string, extra: Partial<RiskDefinition> = {}): RiskDefinition {
  return {
    scan_type: 'NMAP',
    title,
    threat_level: 'MEDIUM',
    description: `Ünïcode and "quotes" \\ and a newline\nin ${title}`,
    solution: 'Close it.',
    cvss: '5.3',
    additional_info: { qod: 72.6, cves: ['CVE-2024-0001'], nested: { port: 22, empty: [], nothing: null } },
    ...extra,
  };
}

function finding(target: Target, fingerprint: string, title: string, extra: Partial<RiskDefinition> = {}): Finding {
  return { fingerprint, location: { host: target.target }, definition: definition(title, extra) };
}

describe('store: a recording writes its staged findings set-based', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let target: Target;

  function insertScan(type: Scan['type'] = 'NMAP'): Scan {
    const source = { id: randomUUID(), accountId: account.id, sourceType: 'IMPORTED' as const, name: 'staged', createdAt: new Date().toISOString() };
    const scan = newImportScan({
      id: randomUUID(),
      accountId: account.id,
      type: type as 'NMAP',
      targets: [target],
      source,
      skippedHosts: 0,
      resultId: randomUUID(),
      contentType: 'application/xml',
      at: new Date().toISOString(),
    });
    core.scanRepository.insertImported(scan, []);
    return scan;
  }

  const rows = () =>
    core.db.prepare('SELECT fingerprint, status, title, threat_level, qod, definition, scan_type FROM risks ORDER BY seq').all() as Array<{
      fingerprint: string;
      status: string;
      title: string;
      threat_level: string;
      qod: number | null;
      definition: string;
      scan_type: string;
    }>;

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'staged' }).account;
    target = core.targets.recordUploaded(account, '45.9.1.1', {});
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('copies each definition into its risk exactly, with title, level and QoD from it, and the first of a fingerprint wins', async () => {
    const first = finding(target, 'nmap:tcp/22', 'SSH');
    const repeat = finding(target, 'nmap:tcp/22', 'SSH seen twice');
    const second = finding(target, 'nmap:tcp/80', 'HTTP', { threat_level: 'HIGH', additional_info: { note: 'no qod' } });
    const recorded = await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      new Map([[target.id, [first, repeat, second]]]),
      handing((risks) => risks),
    );
    expect(recorded && recorded.newOpen).to.have.length(2);
    const stored = rows();
    expect(stored.map((row) => [row.fingerprint, row.status, row.title, row.threat_level, row.qod])).to.deep.equal([
      ['nmap:tcp/22', 'OPEN', 'SSH', 'MEDIUM', 73],
      ['nmap:tcp/80', 'OPEN', 'HTTP', 'HIGH', null],
    ]);
    expect(JSON.parse(stored[0]!.definition)).to.deep.equal(first.definition);
    expect(JSON.parse(stored[1]!.definition)).to.deep.equal(second.definition);
    // The API reads them back as they were found.
    const view = core.risks.get(account, recorded ? recorded.newOpen[0]! : 'none');
    expect(view.definition).to.deep.equal(first.definition);
  });

  it('gives a re-detected risk the new definition, keeps its id and first detection, and closes what was not seen', async () => {
    const before = await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      new Map([[target.id, [finding(target, 'a', 'A v1'), finding(target, 'b', 'B')]]]),
      handing((risks) => risks),
    );
    const firstRows = core.db.prepare('SELECT id, first_detected_at FROM risks ORDER BY seq').all();
    const changed = finding(target, 'a', 'A v2', { threat_level: 'CRITICAL', additional_info: { qod: 10.2 } });
    const after = await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      new Map([[target.id, [changed, finding(target, 'c', 'C')]]]),
      handing((risks) => risks),
    );
    expect(after && after.stillOpen).to.deep.equal([before && before.newOpen[0]]);
    expect(after && after.closed).to.deep.equal([before && before.newOpen[1]]);
    expect(after && after.newOpen).to.have.length(1);
    const stored = rows();
    expect(stored.map((row) => [row.fingerprint, row.status, row.title, row.threat_level, row.qod])).to.deep.equal([
      ['a', 'OPEN', 'A v2', 'CRITICAL', 10],
      ['b', 'CLOSED', 'B', 'MEDIUM', 73],
      ['c', 'OPEN', 'C', 'MEDIUM', 73],
    ]);
    expect(JSON.parse(stored[0]!.definition)).to.deep.equal(changed.definition);
    expect(core.db.prepare('SELECT id, first_detected_at FROM risks ORDER BY seq').all().slice(0, 2)).to.deep.equal(firstRows);
  });

  it("stores a finished scan's risks under its own type even when the parser's definitions name another", async () => {
    await core.history.recordScanWhole(
      insertScan('NMAP_UDP'),
      'SCAN',
      new Map([[target.id, [finding(target, 'nmap:udp/53', 'DNS')]]]),
      handing((risks) => risks),
    );
    const [row] = rows();
    expect(row!.scan_type).to.equal('NMAP_UDP');
    expect(JSON.parse(row!.definition).scan_type).to.equal('NMAP_UDP');
  });

  it('with a webhook endpoint, stores an event for each new, re-detected and closed risk, presenting it as the API does', async () => {
    core.webhookEndpoints.add(account.id, 'https://hooks.example.com/vigil');
    // Text that JSON must escape, in every presented column that comes from the target.
    target = core.targets.create(account, { target: '45.9.1.2', label: 'Shop "eu" \\ ünïcode\ttab', tags: ['pci', 'eu-west'] }, false);
    const stored = () =>
      core.db.prepare("SELECT type, payload FROM events WHERE type LIKE 'risk.%' ORDER BY seq").all() as Array<{ type: string; payload: string }>;
    const first = await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      new Map([[target.id, [finding(target, 'a', 'A'), finding(target, 'b', 'B')]]]),
      handing((risks) => risks),
    );
    expect(stored().map((event) => [event.type, JSON.parse(event.payload).id])).to.deep.equal([
      ['risk.created', first && first.newOpen[0]],
      ['risk.created', first && first.newOpen[1]],
    ]);
    // An accepted risk carries its acceptance in the event.
    core.risks.accept(account, first ? first.newOpen[1]! : 'none', 'known, fixed in Q3');
    const before = stored().length;
    await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      new Map([[target.id, [finding(target, 'b', 'B v2')]]]),
      handing((risks) => risks),
    );
    const updates = stored().slice(before);
    // In the order the risks were created: a closed, b still open with its new definition.
    expect(updates.map((event) => [event.type, JSON.parse(event.payload).status, JSON.parse(event.payload).risk_definition.title])).to.deep.equal([
      ['risk.updated', 'CLOSED', 'A'],
      ['risk.updated', 'OPEN', 'B v2'],
    ]);
    // What each event carries is what the API presents for the risk now.
    for (const event of updates) {
      const payload = JSON.parse(event.payload) as { id: string };
      expect(payload).to.deep.equal(presentRisk(core.risks.get(account, payload.id)));
    }
    expect(JSON.parse(updates[1]!.payload).accepted_by[0].note).to.equal('known, fixed in Q3');
    expect(JSON.parse(updates[1]!.payload).is_accepted).to.equal(true);
    expect(JSON.parse(updates[1]!.payload).target_label).to.equal('Shop "eu" \\ ünïcode\ttab');
  });

  it("drops one recording's staged findings and keeps another's, and leaves nothing once the last goes", () => {
    const staging = new SqliteRecordingStaging(core.db);
    staging.findingSink('scan-a').add([finding(target, 'a1', 'A1'), finding(target, 'a2', 'A2')]);
    staging.findingSink('scan-b').add([finding(target, 'b1', 'B1')]);
    staging.findingSink('scan-c', 'target-key').add([finding(target, 'c1', 'C1')]);
    expect(staging.findingCounts('scan-c')).to.deep.equal(new Map([['target-key', 1]]));
    staging.drop('scan-b');
    expect(staging.findings('scan-a', undefined).map((row) => row.fingerprint)).to.deep.equal(['a1', 'a2']);
    expect(staging.findings('scan-a', [target.target]).map((row) => row.fingerprint)).to.deep.equal(['a1', 'a2']);
    expect(staging.findings('scan-b', undefined)).to.deep.equal([]);
    staging.drop('scan-a');
    expect(staging.findings('scan-c', ['target-key']).map((row) => row.fingerprint)).to.deep.equal(['c1']);
    staging.drop('scan-c');
    expect(core.db.prepare('SELECT COUNT(*) FROM temp.staged_findings').pluck().get()).to.equal(0);
  });

  it("drops a recording's staged findings a piece at a time, in turns of the event loop, and keeps another's", async () => {
    const staging = new SqliteRecordingStaging(core.db);
    staging.findingSink('scan-a').add(['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => finding(target, name, name.toUpperCase())));
    staging.findingSink('scan-b').add([finding(target, 'b1', 'B1')]);
    expect(staging.dropSome('scan-a', 2)).to.equal(true);
    expect(staging.findings('scan-a', undefined).map((row) => row.fingerprint)).to.deep.equal(['a3', 'a4', 'a5']);
    expect([staging.dropSome('scan-a', 2), staging.dropSome('scan-a', 2), staging.dropSome('scan-a', 2)]).to.deep.equal([true, true, false]);
    expect(staging.findings('scan-b', undefined).map((row) => row.fingerprint)).to.deep.equal(['b1']);

    staging.findingSink('scan-c').add(Array.from({ length: 12_000 }, (_, index) => finding(target, `c${index}`, `C${index}`)));
    const counter = new TurnCounter();
    await dropStaged(staging, 'scan-c');
    const turns = counter.stop();
    expect(staging.findings('scan-c', undefined)).to.deep.equal([]);
    // 12,000 findings, 2,000 a turn: at least six turns went to other work.
    expect(turns).to.be.at.least(6);
    expect(staging.findings('scan-b', undefined).map((row) => row.fingerprint)).to.deep.equal(['b1']);
  });

  it('drops the only recording staged at once, its events with it', () => {
    const staging = new SqliteRecordingStaging(core.db);
    staging.findingSink('scan-a').add(['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => finding(target, name, name.toUpperCase())));
    core.db.prepare("INSERT INTO temp.staged_events (scan_id, id, account_id, type, payload, created_at) VALUES ('scan-a', 'e1', 'a', 't', '{}', 'now')").run();
    expect(staging.dropSome('scan-a', 2)).to.equal(false);
    expect(core.db.prepare('SELECT COUNT(*) FROM temp.staged_findings').pluck().get()).to.equal(0);
    expect(core.db.prepare('SELECT COUNT(*) FROM temp.staged_events').pluck().get()).to.equal(0);
  });
});
