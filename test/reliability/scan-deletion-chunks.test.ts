/**
 * Issue 29: deleting a scan of many risks does not hold the event loop. The
 * scan's row goes at once (its detections and risk lists no longer cascade
 * from it) with a journal of those rows and of the (target, type) pairs it
 * covered; its rows are swept and the pairs' risks recomputed a chunk per
 * transaction with a turn of the event loop between chunks; a crash between
 * chunks leaves the journals, and start-up finishes both, so the deletion is
 * never left half-done.
 */
import { expect } from 'chai';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore, type Core } from '../../src/main/composition-root.js';
import { riskHistoryWith } from '../support/risk-history.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';

const HOSTS = 300;

/** An nmap XML of HOSTS hosts with `ports` open ports each (1,500 findings for 5: two chunks). */
function nmapXml(ports: number): Buffer {
  const hosts = Array.from({ length: HOSTS }, (_, host) => {
    const open = Array.from({ length: ports }, (_, port) => `<port protocol="tcp" portid="${port + 1}"><state state="open"/></port>`).join('');
    return `<host><status state="up"/><address addr="45.7.${host >> 8}.${host & 255}" addrtype="ipv4"/><ports>${open}</ports></host>`;
  });
  return Buffer.from(`<?xml version="1.0"?><nmaprun scanner="nmap">${hosts.join('')}</nmaprun>`);
}

async function upload(core: Core, account: Account, sourceId: string, ports: number): Promise<string> {
  const result = core.imports.newUpload();
  result.useScanType('NMAP');
  result.write(nmapXml(ports));
  return (await core.imports.importResult(account, { source_id: sourceId, scan_type: 'NMAP' }, result.finish())).scan.id;
}

/** Scan A finds ports 1 to `ports` on every host, then scan B only port 1: deleting A leaves HOSTS risks, each first detected by B. */
async function twoScans(core: Core, ports = 5): Promise<{ account: Account; first: string; firstSeq: number; second: string }> {
  const { account } = core.accounts.createAccount({ name: 'sweeps', monthlyScanLimit: null });
  const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'sweeps' });
  const first = await upload(core, account, source.id, ports);
  const second = await upload(core, account, source.id, 1);
  return { account, first, firstSeq: count(core, 'SELECT seq FROM scans WHERE id = ?', first), second };
}

/** The deleted scan's rows not yet swept: its detections and its risk list entries (keyed by its seq). */
function leftOf(core: Core, scanId: string, seq: number): { detections: number; scanRisks: number } {
  return {
    detections: count(core, 'SELECT count(*) FROM detections WHERE scan_id = ?', scanId),
    scanRisks: count(core, 'SELECT count(*) FROM scan_risks WHERE scan_seq = ?', seq),
  };
}

function count(core: Core, sql: string, ...params: unknown[]): number {
  return core.db
    .prepare(sql)
    .pluck()
    .get(...params) as number;
}

/** What deleting the first scan must leave: one OPEN risk per host, first and last detected by the second scan, and none of its rows. */
function expectFirstScanForgotten(core: Core, accountId: string, first: { id: string; seq: number }, second: string): void {
  expect(count(core, 'SELECT count(*) FROM risks WHERE account_id = ?', accountId)).to.equal(HOSTS);
  const bySecond = `SELECT count(*) FROM risks r JOIN scan_coverage c ON c.scan_id = ? AND c.target_id = r.target_id
    WHERE r.account_id = ? AND r.status = 'OPEN' AND r.first_detected_at = c.covered_at AND r.last_detected_at = c.covered_at`;
  expect(count(core, bySecond, second, accountId)).to.equal(HOSTS);
  expect(count(core, 'SELECT count(*) FROM pending_scan_forgets')).to.equal(0);
  expect(leftOf(core, first.id, first.seq)).to.deep.equal({ detections: 0, scanRisks: 0 });
  expect(count(core, 'SELECT count(*) FROM pending_scan_sweeps')).to.equal(0);
}

/** The service started on the data directory a crash left: it logs the deletion as finished, which left what a whole one would. */
async function expectFinishedAtStartUp(dataDir: string, accountId: string, first: { id: string; seq: number }, second: string): Promise<void> {
  const service = await TestService.start({ dataDir });
  try {
    expect(service.logLines.some((line) => line.includes(`"finished_scan_deletions":["${first.id}"]`))).to.equal(true);
    const reopened = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    try {
      expectFirstScanForgotten(reopened, accountId, first, second);
    } finally {
      reopened.db.close();
    }
  } finally {
    await service.stop();
  }
}

/** Another task, one step per turn of the event loop, looking at the store until `done` says the deletion is over. */
async function turnsMeanwhile<T>(look: () => T, done: () => boolean): Promise<T[]> {
  const seen: T[] = [];
  while (!done()) {
    await new Promise((resolve) => setImmediate(resolve));
    if (!done()) seen.push(look());
  }
  return seen;
}

describe('reliability: deleting a scan of many risks recomputes them in chunks', function () {
  this.timeout(120_000);
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('lets other work run between its chunks, the scan already gone, and leaves what a whole recompute would', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    try {
      const { account, first, firstSeq, second } = await twoScans(core);
      expect(count(core, 'SELECT count(*) FROM risks WHERE account_id = ?', account.id)).to.equal(HOSTS * 5);
      let deleted = false;
      const seenMeanwhile = turnsMeanwhile(
        () => ({
          scans: count(core, 'SELECT count(*) FROM scans WHERE id = ?', first),
          pending: count(core, 'SELECT count(*) FROM pending_scan_forgets'),
          ...leftOf(core, first, firstSeq),
        }),
        () => deleted,
      );
      await core.scans.delete(account, first).finally(() => (deleted = true));
      const seen = await seenMeanwhile;
      expect(seen.length, 'turns of the event loop taken by others during the deletion').to.be.greaterThan(0);
      // After the first transaction alone: the scan's row is gone, its detections and risk lists are not (no cascade).
      expect(seen[0]).to.deep.equal({ scans: 0, pending: HOSTS, detections: HOSTS * 5, scanRisks: HOSTS * 5 });
      const recomputing = seen.find((state) => state.pending < HOSTS);
      expect(recomputing, 'the recompute starts after the sweep').to.deep.include({ detections: 0, scanRisks: 0 });
      expectFirstScanForgotten(core, account.id, { id: first, seq: firstSeq }, second);
    } finally {
      await core.reportWorkers.close();
      core.db.close();
    }
  });

  it('is finished at start-up when the process stopped between chunks', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    const { account, first, firstSeq, second } = await twoScans(core);
    // The second chunk's transaction fails as a crash would end it: only the first chunk is committed.
    let chunks = 0;
    core.history.transaction(() => {
      core.history.journalForget(account.id, first);
      core.scanRepository.delete(account.id, first);
    });
    const cut = await core.history
      .forgetDeletedScan(first, () => {
        if (++chunks === 2) throw new Error('killed');
      })
      .catch((error: Error) => error.message);
    expect(cut).to.equal('killed');
    expect(count(core, 'SELECT count(*) FROM pending_scan_forgets')).to.be.within(1, HOSTS - 1);
    expect(count(core, 'SELECT count(*) FROM risks WHERE account_id = ?', account.id)).to.be.greaterThan(HOSTS);
    await core.reportWorkers.close();
    core.db.close();

    await expectFinishedAtStartUp(dir.path, account.id, { id: first, seq: firstSeq }, second);
  });

  it('ends a recompute chunk at its time budget, after the pair that reached it, as well as at its count of risks', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    try {
      const { account, first, firstSeq, second } = await twoScans(core);
      // The same store, with a budget no pair fits in: each transaction recomputes one pair (5 risks; the count alone allows 30).
      const history = riskHistoryWith(core.db, { transactionMs: 0 });
      history.transaction(() => {
        history.journalForget(account.id, first);
        core.scanRepository.delete(account.id, first);
      });
      const pendingAfterEachChunk: number[] = [];
      await history.forgetDeletedScan(first, () => pendingAfterEachChunk.push(count(core, 'SELECT count(*) FROM pending_scan_forgets')));
      expect(pendingAfterEachChunk).to.deep.equal(Array.from({ length: HOSTS }, (_, index) => HOSTS - 1 - index));
      expectFirstScanForgotten(core, account.id, { id: first, seq: firstSeq }, second);
    } finally {
      await core.reportWorkers.close();
      core.db.close();
    }
  });

  // 17 ports on 300 hosts: 5,100 detections and as many risk list entries, more than one sweep chunk (5,000 rows) of each.
  const PORTS = 17;
  const ROWS = HOSTS * PORTS;

  it('sweeps the detections and risk lists of a scan of many risks a chunk per transaction after its row is gone', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    try {
      const { account, first, firstSeq, second } = await twoScans(core, PORTS);
      expect(leftOf(core, first, firstSeq)).to.deep.equal({ detections: ROWS, scanRisks: ROWS });
      let deleted = false;
      const seenMeanwhile = turnsMeanwhile(
        () => leftOf(core, first, firstSeq),
        () => deleted,
      );
      await core.scans.delete(account, first).finally(() => (deleted = true));
      const seen = await seenMeanwhile;
      const steps = seen.filter((state, index) => index === 0 || JSON.stringify(state) !== JSON.stringify(seen[index - 1]));
      expect(steps).to.deep.equal([
        { detections: ROWS, scanRisks: ROWS },
        { detections: ROWS - 5000, scanRisks: ROWS },
        { detections: 0, scanRisks: ROWS },
        { detections: 0, scanRisks: ROWS - 5000 },
        { detections: 0, scanRisks: 0 },
      ]);
      expectFirstScanForgotten(core, account.id, { id: first, seq: firstSeq }, second);
    } finally {
      await core.reportWorkers.close();
      core.db.close();
    }
  });

  it('is finished at start-up when the process stopped between chunks of the sweep', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    const { account, first, firstSeq, second } = await twoScans(core, PORTS);
    const deleting = core.scans.delete(account, first).catch((error: Error) => error);
    while (leftOf(core, first, firstSeq).detections === ROWS) await new Promise((resolve) => setImmediate(resolve));
    // Between the first sweep chunk and the second the process stops: the connection closes under the deletion.
    expect(leftOf(core, first, firstSeq)).to.deep.equal({ detections: ROWS - 5000, scanRisks: ROWS });
    expect(count(core, 'SELECT count(*) FROM pending_scan_sweeps')).to.equal(1);
    core.db.close();
    expect(await deleting).to.be.instanceOf(Error);
    await core.reportWorkers.close();

    await expectFinishedAtStartUp(dir.path, account.id, { id: first, seq: firstSeq }, second);
  });
});
