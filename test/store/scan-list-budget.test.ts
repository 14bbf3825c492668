/**
 * A page of scans reads the risk lists it can send (issue 29): scans of a
 * large account hold tens of thousands of risk ids each, and a list page
 * holds about LIST_PAGE_BYTE_BUDGET of JSON, so the page ends at the scan
 * whose ids would pass MAX_RISK_IDS_PER_PAGE rather than reading every
 * scan's lists; the next page carries on from there, and every id is sent.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import { MAX_RISK_IDS_PER_PAGE } from '../../src/store/scans-repository.js';
import { tempDir } from '../support/temp-dir.js';

describe('a page of scans and their risk lists', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'acme' }).account;
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  /** A SUCCEEDED scan whose lists hold `count` ids, recorded as the controller records one. */
  function succeeded(count: number): Scan {
    const queued = core.scans.start(account, { type: 'NMAP', targets: ['93.184.216.34'] })[0]!;
    const ids = Array.from({ length: count }, () => randomUUID());
    const half = Math.floor(count / 2);
    const scan: Scan = {
      ...queued,
      state: 'SUCCEEDED',
      progress: 100,
      finishedAt: new Date().toISOString(),
      risks: { newOpen: ids.slice(0, half), stillOpen: ids.slice(half), closed: [] },
    };
    expect(core.scanRepository.saveWithResults(scan, [], [], 'QUEUED')).to.equal(true);
    return scan;
  }

  it('ends the page at the scan whose ids would pass the budget, and the next page carries on with every id', () => {
    const each = Math.ceil(MAX_RISK_IDS_PER_PAGE * 0.6);
    const [oldest, middle, newest] = [succeeded(each), succeeded(each), succeeded(10)];
    const first = core.scanRepository.list(account.id, { filters: {}, pageSize: 50, after: undefined });
    expect(
      first.items.map((scan) => scan.id),
      'the newest, then one large scan: a second would pass the budget',
    ).to.deep.equal([newest!.id, middle!.id]);
    expect(first.nextCursor).to.not.equal(undefined);
    expect(first.items[1]!.risks).to.deep.equal(middle!.risks);
    const second = core.scanRepository.list(account.id, { filters: {}, pageSize: 50, after: first.nextCursor });
    expect(second.items.map((scan) => scan.id)).to.deep.equal([oldest!.id]);
    expect(second.items[0]!.risks).to.deep.equal(oldest!.risks);
    expect(second.nextCursor).to.equal(undefined);
  });

  it('always sends one scan, however many ids it holds', () => {
    const huge = succeeded(MAX_RISK_IDS_PER_PAGE + 10);
    const page = core.scanRepository.list(account.id, { filters: {}, pageSize: 50, after: undefined });
    expect(page.items.map((scan) => scan.id)).to.deep.equal([huge.id]);
    expect(page.items[0]!.risks.newOpen.length + page.items[0]!.risks.stillOpen.length).to.equal(MAX_RISK_IDS_PER_PAGE + 10);
  });
});
