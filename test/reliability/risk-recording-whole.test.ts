/**
 * Issue 17 (scan admission): a recording that fits one transaction (a scan's
 * usual size) is written in one, with the scan's own last step, and no
 * pending marker; refused or failing, SQLite rolls it back whole. A larger
 * one still goes in chunks (test/reliability/risk-recording.test.ts).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { newImportScan } from '../../src/domain/imports/import-scan.js';
import type { Finding } from '../../src/domain/risks/finding.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { Target } from '../../src/domain/targets/target.js';
import { composeCore } from '../../src/main/composition-root.js';
import { tempDir } from '../support/temp-dir.js';
import { handing } from '../support/risk-history.js';

function openPort(target: Target, port: number): Finding {
  return {
    fingerprint: `nmap:tcp/${port}`,
    location: { host: target.target, port, protocol: 'tcp' },
    definition: { scan_type: 'NMAP', title: `Open port ${port}/tcp`, threat_level: 'INFO', description: '', solution: '', cvss: '', additional_info: {} },
  };
}

describe('reliability: a small recording is one transaction', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let targets: Target[];

  function insertScan(of: Target[] = targets): Scan {
    const source = { id: randomUUID(), accountId: account.id, sourceType: 'IMPORTED' as const, name: 'whole', createdAt: new Date().toISOString() };
    const scan = newImportScan({
      id: randomUUID(),
      accountId: account.id,
      type: 'NMAP',
      targets: of,
      source,
      skippedHosts: 0,
      resultId: randomUUID(),
      contentType: 'application/xml',
      at: new Date().toISOString(),
    });
    core.scanRepository.insertImported(scan, []);
    return scan;
  }

  function findings(ports: number[], of: Target[] = targets): Map<string, Finding[]> {
    return new Map(of.map((target) => [target.id, ports.map((port) => openPort(target, port))]));
  }

  const snapshot = () => core.db.prepare('SELECT fingerprint, status, first_detected_at, last_detected_at FROM risks ORDER BY seq').all();
  const markers = () => core.db.prepare('SELECT COUNT(*) AS n FROM pending_recordings').get();

  beforeEach(async () => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'whole' }).account;
    targets = Array.from({ length: 3 }, (_, index) => core.targets.recordUploaded(account, `45.9.0.${index + 1}`, {}));
    const recorded = await core.history.recordScanWhole(
      insertScan(),
      'SCAN',
      findings([22, 80]),
      handing((risks) => risks),
    );
    expect(recorded && recorded.newOpen).to.have.length(6);
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('records new, still open and closed risks, and the last step sees them, within one transaction and without a marker', async () => {
    const second = insertScan();
    let markerDuringFinish: unknown;
    let inTransaction: boolean | undefined;
    const result = await core.history.recordScanWhole(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => {
        markerDuringFinish = markers();
        inTransaction = core.db.inTransaction;
        return risks;
      }),
    );
    const lists = result as Exclude<typeof result, false>;
    expect([lists.newOpen.length, lists.stillOpen.length, lists.closed.length]).to.deep.equal([3, 3, 3]);
    expect(markerDuringFinish).to.deep.equal({ n: 0 });
    expect(inTransaction).to.equal(true);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM risks').get()).to.deep.equal({ n: 9 });
    expect(core.riskRepository.coveredBy(second.id)).to.have.length(3);
  });

  it('rolls back whole when the last step refuses (a stop won)', async () => {
    const before = snapshot();
    const second = insertScan();
    expect(
      await core.history.recordScanWhole(
        second,
        'SCAN',
        findings([80, 443]),
        handing(() => false),
      ),
    ).to.equal(false);
    expect(snapshot()).to.deep.equal(before);
    expect(core.riskRepository.coveredBy(second.id)).to.deep.equal([]);
    expect(markers()).to.deep.equal({ n: 0 });
  });

  it('rolls back whole when the last step throws, and passes the error on', async () => {
    const before = snapshot();
    const second = insertScan();
    let failure: unknown;
    await core.history
      .recordScanWhole(
        second,
        'SCAN',
        findings([443]),
        handing(() => {
          throw new Error('disk full');
        }),
      )
      .catch((error: unknown) => (failure = error));
    expect((failure as Error).message).to.equal('disk full');
    expect(snapshot()).to.deep.equal(before);
    expect(core.riskRepository.coveredBy(second.id)).to.deep.equal([]);
  });

  it('a recording of 1,000 findings or more goes in chunks under a marker', async () => {
    const many = Array.from({ length: 10 }, (_, index) => core.targets.recordUploaded(account, `45.9.1.${index + 1}`, {}));
    const ports = Array.from({ length: 100 }, (_, index) => 1000 + index);
    let markerDuringFinish: unknown;
    const result = await core.history.recordScanWhole(
      insertScan(many),
      'SCAN',
      findings(ports, many),
      handing((risks) => {
        markerDuringFinish = markers();
        return risks;
      }),
    );
    expect(result && result.newOpen).to.have.length(1000);
    expect(markerDuringFinish).to.deep.equal({ n: 1 });
    expect(markers()).to.deep.equal({ n: 0 });
  });
});
