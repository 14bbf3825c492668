/**
 * Issue 29: deleting a scan of many risks does not hold the event loop. The
 * scan goes at once with a journal of the (target, type) pairs it covered;
 * their risks are recomputed a chunk per transaction with a turn of the
 * event loop between chunks; a crash between chunks leaves the journal,
 * and start-up finishes the recompute, so the deletion is never left
 * half-done.
 */
import { expect } from 'chai';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore, type Core } from '../../src/main/composition-root.js';
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

/** Scan A finds ports 1-5 on every host, then scan B only port 1: deleting A leaves HOSTS risks, each first detected by B. */
async function twoScans(core: Core): Promise<{ account: Account; first: string; second: string }> {
  const { account } = core.accounts.createAccount({ name: 'sweeps', monthlyScanLimit: null });
  const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'sweeps' });
  const first = await upload(core, account, source.id, 5);
  const second = await upload(core, account, source.id, 1);
  return { account, first, second };
}

function count(core: Core, sql: string, ...params: unknown[]): number {
  return core.db
    .prepare(sql)
    .pluck()
    .get(...params) as number;
}

/** What deleting the first scan must leave: one OPEN risk per host, first and last detected by the second scan. */
function expectFirstScanForgotten(core: Core, accountId: string, second: string): void {
  expect(count(core, 'SELECT count(*) FROM risks WHERE account_id = ?', accountId)).to.equal(HOSTS);
  const bySecond = `SELECT count(*) FROM risks r JOIN scan_coverage c ON c.scan_id = ? AND c.target_id = r.target_id
    WHERE r.account_id = ? AND r.status = 'OPEN' AND r.first_detected_at = c.covered_at AND r.last_detected_at = c.covered_at`;
  expect(count(core, bySecond, second, accountId)).to.equal(HOSTS);
  expect(count(core, 'SELECT count(*) FROM pending_scan_forgets')).to.equal(0);
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
      const { account, first, second } = await twoScans(core);
      expect(count(core, 'SELECT count(*) FROM risks WHERE account_id = ?', account.id)).to.equal(HOSTS * 5);
      // Another task, one step per turn of the event loop, looking at the store while the deletion runs.
      let deleted = false;
      const seenMeanwhile = (async () => {
        const seen: Array<{ scans: number; pending: number }> = [];
        while (!deleted) {
          await new Promise((resolve) => setImmediate(resolve));
          if (!deleted)
            seen.push({
              scans: count(core, 'SELECT count(*) FROM scans WHERE id = ?', first),
              pending: count(core, 'SELECT count(*) FROM pending_scan_forgets'),
            });
        }
        return seen;
      })();
      await core.scans.delete(account, first).finally(() => (deleted = true));
      const seen = await seenMeanwhile;
      expect(seen.length, 'turns of the event loop taken by others during the deletion').to.be.greaterThan(0);
      expect(seen[0]).to.deep.equal({ scans: 0, pending: HOSTS - 200 });
      expectFirstScanForgotten(core, account.id, second);
    } finally {
      await core.reportWorkers.close();
      core.db.close();
    }
  });

  it('is finished at start-up when the process stopped between chunks', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    const { account, first, second } = await twoScans(core);
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

    const service = await TestService.start({ dataDir: dir.path });
    try {
      expect(service.logLines.some((line) => line.includes(`"finished_scan_deletions":["${first}"]`))).to.equal(true);
      const reopened = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
      try {
        expectFirstScanForgotten(reopened, account.id, second);
      } finally {
        reopened.db.close();
      }
    } finally {
      await service.stop();
    }
  });
});
