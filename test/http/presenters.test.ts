import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { DEFAULT_ZAP_SETTINGS, type Target } from '../../src/domain/targets/target.js';
import { healthScore } from '../../src/domain/targets/health-score.js';
import { presentTarget } from '../../src/http/presenters/target.js';
import { tempDir } from '../support/temp-dir.js';
import type { TargetListQuery } from '../../src/app/ports.js';

describe('target presenters: the list fast path (JSON rendered by SQLite) is exactly what presentTarget presents', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let repository: SqliteTargetRepository;
  let accountId: string;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    repository = new SqliteTargetRepository(db);
    accountId = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'a' }).account.id;
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const variants: Array<[string, Partial<Target>]> = [
    ['a plain target', {}],
    ['a label with quotes, backslashes, control characters and non-ASCII', { label: 'He said "hi" \\ \u0001 – 漢字 </script>' }],
    ['every control character, DEL, line separators and an emoji', { label: `${Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join('')}\u007f\u2028\u2029 😀 /` }],
    ['a login recording and a last scan', { authSeleniumFile: 'login "flow".side', lastScannedAt: '2026-02-03T04:05:06.789Z' }],
    ['tags and every zap setting', {
      tags: ['prod', 'eu-west'],
      zap: { ...DEFAULT_ZAP_SETTINGS, seed_urls: ['https://example.com/a?b="c"'], headers: [{ key: 'X-A', value: 'v\u2028' }], cookies: [{ name: 'n', value: 'v', sameSite: 'Lax', expiry: 1 }] },
    }],
    ['a lowered health score', { healthScore: healthScore({ HIGH: 1, MEDIUM: 2 }), origin: 'CLOUD_PROVIDER' }],
    ['host facts from an uploaded result', { origin: 'UPLOADED_RESULTS', os: 'Linux 3.0 "x"', hostname: 'scanme.nmap.org' }],
    ['a host name without an OS', { origin: 'UPLOADED_RESULTS', hostname: 'example.com' }],
  ];

  for (const [what, overrides] of variants) {
    it(`for ${what}`, () => {
      const target: Target = {
        id: randomUUID(),
        accountId,
        target: 'https://example.com/x',
        label: '',
        tags: [],
        healthScore: healthScore({}),
        authSeleniumFile: undefined,
        zap: { ...DEFAULT_ZAP_SETTINGS },
        origin: 'MANUAL',
        createdAt: '2026-01-01T00:00:00.000Z',
        lastScannedAt: null,
        ...overrides,
      };
      repository.insert(target);
      const json = Buffer.from(repository.listJson(accountId, { filters: {}, sort: [], pageSize: 10, after: undefined }, 4 * 1024 * 1024).body).toString('utf8');
      // The very bytes JSON.stringify writes: same keys, same order, same escapes.
      expect(json).to.equal(JSON.stringify(presentTarget(repository.findById(accountId, target.id)!)));
      expect(json).to.equal(JSON.stringify(presentTarget(target)));
    });
  }

  it('for a target with an API definition and a login recording attached', () => {
    const target: Target = {
      id: randomUUID(), accountId, target: 'https://example.com/api', label: 'api', tags: [], healthScore: healthScore({}),
      authSeleniumFile: undefined, zap: { ...DEFAULT_ZAP_SETTINGS }, origin: 'MANUAL', createdAt: '2026-01-01T00:00:00.000Z', lastScannedAt: null,
    };
    repository.insert(target);
    const updatedAt = '2026-01-02T00:00:00.000Z';
    repository.attach(accountId, target.id, { kind: 'openapi', fileName: 'shop "v2".yaml', content: Buffer.from('openapi: 3.0.0'), updatedAt });
    repository.attach(accountId, target.id, { kind: 'selenium', fileName: 'login.side', content: Buffer.from('{}'), updatedAt });
    const json = Buffer.from(repository.listJson(accountId, { filters: {}, sort: [], pageSize: 10, after: undefined }, 4 * 1024 * 1024).body).toString('utf8');
    expect(JSON.parse(json)).to.include({ openapi_file: 'shop "v2".yaml', auth_selenium_file: 'login.side' });
    expect(json).to.equal(JSON.stringify(presentTarget(repository.findById(accountId, target.id)!)));
  });

  describe('pages rendered by the store', () => {
    const labels = ['delta', 'alpha', 'echo', 'alpha', 'charlie', 'bravo', 'golf'];
    const ids = (body: Uint8Array) => (JSON.parse(`[${Buffer.from(body).toString('utf8')}]`) as Array<{ id: string }>).map((target) => target.id);
    /** Every page of listJson, following its cursors; each page's ids. */
    const walk = (sort: TargetListQuery['sort'], pageSize: number, budget: number): string[][] => {
      const pages: string[][] = [];
      let after: TargetListQuery['after'];
      do {
        const page = repository.listJson(accountId, { filters: {}, sort, pageSize, after }, budget);
        expect(page.count).to.equal(ids(page.body).length);
        pages.push(ids(page.body));
        after = page.nextCursor;
      } while (after !== undefined && pages.length < 20);
      return pages;
    };

    beforeEach(() => {
      labels.forEach((label, index) => {
        repository.insert({
          id: randomUUID(), accountId, target: `https://t${index}.example.com`, label, tags: [], healthScore: healthScore({}), authSeleniumFile: undefined,
          zap: { ...DEFAULT_ZAP_SETTINGS }, origin: 'MANUAL', createdAt: `2026-01-01T00:00:0${index}.000Z`, lastScannedAt: null,
        });
      });
    });

    for (const sort of [[], [{ field: 'label', direction: 'asc' }], [{ field: 'target', direction: 'desc' }]] as Array<TargetListQuery['sort']>) {
      it(`hold the rows list() reads, in its order, page by page (sort ${JSON.stringify(sort)})`, () => {
        const expected = repository.list(accountId, { filters: {}, sort, pageSize: 100, after: undefined }).items.map((row) => row.id);
        const pages = walk(sort, 3, 4 * 1024 * 1024);
        expect(pages.map((page) => page.length)).to.deep.equal([3, 3, 1]);
        expect(pages.flat()).to.deep.equal(expected);
      });

      it(`end a page early at the byte budget, one row at least, and continue without a gap or a repeat (sort ${JSON.stringify(sort)})`, () => {
        const expected = repository.list(accountId, { filters: {}, sort, pageSize: 100, after: undefined }).items.map((row) => row.id);
        const pages = walk(sort, 3, 1);
        expect(pages.every((page) => page.length === 1)).to.equal(true);
        expect(pages.flat()).to.deep.equal(expected);
      });
    }

    it('is empty, without a cursor, for an account without targets', () => {
      const other = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'b' }).account.id;
      const page = repository.listJson(other, { filters: {}, sort: [], pageSize: 10, after: undefined }, 1024);
      expect(page).to.deep.equal({ body: new Uint8Array(0), count: 0, nextCursor: undefined });
    });
  });
});
