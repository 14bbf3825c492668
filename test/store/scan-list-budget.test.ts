/**
 * GET /v1/scans' page (ScansService.listJson, issue 29): scans of a large
 * account hold tens of thousands of risk ids each, so a page ends before the
 * scan that would pass LIST_PAGE_BYTE_BUDGET (known from the lists' lengths,
 * before they are read), and each scan's lists are read and rendered a chunk
 * per turn of the event loop, in pieces sent as they come. The text is
 * exactly presentScan()'s JSON.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { LIST_PAGE_BYTE_BUDGET } from '../../src/app/pagination.js';
import { presentScan, RISK_ID_JSON_CHARS, RISK_IDS_PER_TURN } from '../../src/app/present/scan.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import { tempDir } from '../support/temp-dir.js';
import { TurnCounter } from '../support/turn-counter.js';

const IDS_PER_PAGE = Math.floor(LIST_PAGE_BYTE_BUDGET / RISK_ID_JSON_CHARS);

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

  /** A SUCCEEDED scan whose lists hold `count` ids (half new, the rest still open, a few closed), recorded as the controller records one. */
  function succeeded(count: number): Scan {
    const queued = core.scans.start(account, { type: 'NMAP', targets: ['93.184.216.34'] })[0]!;
    const ids = Array.from({ length: count }, () => randomUUID());
    const half = Math.floor(count / 2);
    const scan: Scan = {
      ...queued,
      state: 'SUCCEEDED',
      progress: 100,
      finishedAt: new Date().toISOString(),
      risks: { newOpen: ids.slice(0, half), stillOpen: ids.slice(half, count - 3), closed: ids.slice(count - 3) },
    };
    expect(core.scanRepository.saveWithResults(scan, [], [], 'QUEUED')).to.equal(true);
    return scan;
  }

  async function textOf(pieces: AsyncIterable<string>): Promise<string> {
    let text = '';
    for await (const piece of pieces) text += piece;
    return text;
  }

  async function page(pageToken?: string): Promise<{ data: unknown[]; next_page_token?: string }> {
    const result = core.scans.listJson(account, { page_size: 50, ...(pageToken === undefined ? {} : { page_token: pageToken }) });
    const close = result.nextPageToken === undefined ? ']}' : `],"next_page_token":${JSON.stringify(result.nextPageToken)}}`;
    return JSON.parse(`{"data":[${await textOf(result.pieces)}${close}`);
  }

  /** The text GET /v1/scans/{id} sends for the scan, keys in the same order. */
  const asGetSendsIt = (scan: Scan) => JSON.stringify(presentScan(core.scans.get(account, scan.id)));

  it('ends the page before the scan whose ids would pass the budget, and the next page carries on with every id', async () => {
    const each = Math.ceil(IDS_PER_PAGE * 0.6);
    const [oldest, middle, newest] = [succeeded(each), succeeded(each), succeeded(10)];
    const first = await page();
    expect(
      first.data.map((scan: any) => scan.id),
      'the newest, then one large scan: a second would pass the budget',
    ).to.deep.equal([newest!.id, middle!.id]);
    expect(first.next_page_token).to.be.a('string');
    expect(first.data.map((scan) => JSON.stringify(scan))).to.deep.equal([asGetSendsIt(newest!), asGetSendsIt(middle!)]);
    const second = await page(first.next_page_token);
    expect(second.data.map((scan) => JSON.stringify(scan))).to.deep.equal([asGetSendsIt(oldest!)]);
    expect(second.next_page_token).to.equal(undefined);
  });

  it('always sends one scan, however many ids it holds', async () => {
    const huge = succeeded(IDS_PER_PAGE + 10);
    succeeded(5);
    const first = await page();
    const second = await page(first.next_page_token);
    expect(second.data.map((scan: any) => scan.id)).to.deep.equal([huge.id]);
    expect(JSON.stringify(second.data[0])).to.equal(asGetSendsIt(huge));
  });

  it("the store's page with a budget ends at the scan whose estimate passes it, that scan included, and its pages add up to the list", () => {
    const made = Array.from({ length: 7 }, () => succeeded(10)).reverse();
    const list = (after?: Array<string | number>) =>
      core.scanRepository.list(account.id, { filters: {}, pageSize: 50, after, budget: { chars: 1000, sizeOf: ({ riskIds }) => riskIds * 40 } });
    // 400 estimated characters a scan: the third takes the page to 1,200.
    const first = list();
    expect(first.items.map((scan) => scan.id)).to.deep.equal(made.slice(0, 3).map((scan) => scan.id));
    expect(first.items.map((scan) => scan.riskCounts)).to.deep.equal(made.slice(0, 3).map(() => ({ newOpen: 5, stillOpen: 2, closed: 3 })));
    const ids = [...first.items.map((scan) => scan.id)];
    for (let page = list(first.nextCursor); ; page = list(page.nextCursor)) {
      ids.push(...page.items.map((scan) => scan.id));
      if (page.nextCursor === undefined) break;
    }
    expect(ids).to.deep.equal(made.map((scan) => scan.id));
    // The estimate counts the stored targets too; without a budget the page is the page size.
    const byText = core.scanRepository.list(account.id, {
      filters: {},
      pageSize: 50,
      after: undefined,
      budget: { chars: 1, sizeOf: ({ storedChars }) => storedChars },
    });
    expect(byText.items).to.have.length(1);
    expect(core.scanRepository.list(account.id, { filters: {}, pageSize: 50, after: undefined }).items).to.have.length(7);
  });

  it('reads the lists a chunk per turn of the event loop, so other work runs while a page renders', async () => {
    succeeded(3 * RISK_IDS_PER_TURN + 7);
    const counter = new TurnCounter();
    const rendered = await page();
    const turns = counter.stop();
    expect(rendered.data).to.have.length(1);
    expect(turns, 'turns of the loop while one scan of four chunks rendered').to.be.greaterThanOrEqual(4);
  });

  it('sends valid JSON when a scan goes while its lists are read', async () => {
    const scan = succeeded(2 * RISK_IDS_PER_TURN);
    const { pieces } = core.scans.listJson(account, {});
    // Before the first chunk is read (after a turn): the lists are gone, as a deletion leaves them.
    core.db.prepare('DELETE FROM scan_risks').run();
    const body = await textOf(pieces);
    expect(JSON.parse(`[${body}]`)[0])
      .to.include({ id: scan.id })
      .and.to.have.deep.property('risks', { new_open: [], still_open: [], closed: [] });
  });
});
