import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { SqliteTargetRepository, TARGET_JSON_SQL } from '../../src/store/targets-repository.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { DEFAULT_ZAP_SETTINGS, type Target } from '../../src/domain/targets/target.js';
import { healthScore } from '../../src/domain/targets/health-score.js';
import { presentTarget } from '../../src/app/present/target.js';
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
    [
      'every control character, DEL, line separators and an emoji',
      { label: `${Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join('')}\u007f\u2028\u2029 😀 /` },
    ],
    ['a login recording and a last scan', { authSeleniumFile: 'login "flow".side', lastScannedAt: '2026-02-03T04:05:06.789Z' }],
    [
      'tags and every zap setting',
      {
        tags: ['prod', 'eu-west'],
        zap: {
          ...DEFAULT_ZAP_SETTINGS,
          seed_urls: ['https://example.com/a?b="c"'],
          headers: [{ key: 'X-A', value: 'v\u2028' }],
          cookies: [{ name: 'n', value: 'v', sameSite: 'Lax', expiry: 1 }],
        },
      },
    ],
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
      const json = Buffer.from(repository.listJson(accountId, { filters: {}, sort: [], pageSize: 10, after: undefined }, 4 * 1024 * 1024).body).toString(
        'utf8',
      );
      // The very bytes JSON.stringify writes: same keys, same order, same escapes.
      expect(json).to.equal(JSON.stringify(presentTarget(repository.findById(accountId, target.id)!)));
      expect(json).to.equal(JSON.stringify(presentTarget(target)));
    });
  }

  it('for a target with an API definition and a login recording attached', () => {
    const target: Target = {
      id: randomUUID(),
      accountId,
      target: 'https://example.com/api',
      label: 'api',
      tags: [],
      healthScore: healthScore({}),
      authSeleniumFile: undefined,
      zap: { ...DEFAULT_ZAP_SETTINGS },
      origin: 'MANUAL',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastScannedAt: null,
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
      } while (after !== undefined && pages.length < 100);
      return pages;
    };

    beforeEach(() => {
      labels.forEach((label, index) => {
        repository.insert({
          id: randomUUID(),
          accountId,
          target: `https://t${index}.example.com`,
          label,
          tags: [],
          healthScore: healthScore({}),
          authSeleniumFile: undefined,
          zap: { ...DEFAULT_ZAP_SETTINGS },
          origin: 'MANUAL',
          createdAt: `2026-01-01T00:00:0${index}.000Z`,
          lastScannedAt: null,
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

    it('keep the order of every sort over many rows and pages, and give no cursor after a page that ends the list exactly', () => {
      // The store joins the rendered rows in the order its ordered, limited subquery yields them (no sort of the rendered rows).
      const random = (() => {
        let state = 17;
        return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      })();
      for (let index = 0; index < 233; index++) {
        repository.insert({
          id: randomUUID(),
          accountId,
          target: `https://m${Math.floor(random() * 1e9)}-${index}.example.com`,
          label: labels[Math.floor(random() * labels.length)]!,
          tags: [],
          healthScore: healthScore({}),
          authSeleniumFile: undefined,
          zap: { ...DEFAULT_ZAP_SETTINGS },
          origin: 'MANUAL',
          createdAt: `2026-01-02T00:00:00.${String(index).padStart(3, '0')}Z`,
          lastScannedAt: random() < 0.3 ? null : `2026-03-0${1 + Math.floor(random() * 9)}T00:00:00.000Z`,
        });
      }
      const total = labels.length + 233;
      const sorts: Array<TargetListQuery['sort']> = [
        [],
        [{ field: 'created_at', direction: 'asc' }],
        [{ field: 'label', direction: 'asc' }],
        [{ field: 'label', direction: 'desc' }],
        [{ field: 'target', direction: 'asc' }],
        [{ field: 'target', direction: 'desc' }],
        [
          { field: 'last_scanned', direction: 'desc' },
          { field: 'label', direction: 'asc' },
        ],
        [
          { field: 'label', direction: 'asc' },
          { field: 'created_at', direction: 'asc' },
        ],
      ];
      for (const sort of sorts) {
        const expected = repository.list(accountId, { filters: {}, sort, pageSize: 500, after: undefined }).items.map((row) => row.id);
        expect(expected).to.have.length(total);
        for (const pageSize of [7, 120, total]) {
          const pages = walk(sort, pageSize, 4 * 1024 * 1024);
          expect(pages.flat(), `sort ${JSON.stringify(sort)}, pages of ${pageSize}`).to.deep.equal(expected);
          expect(pages.length, `sort ${JSON.stringify(sort)}, pages of ${pageSize}`).to.equal(Math.ceil(total / pageSize));
        }
      }
    });

    it("read a page in created_at order from the index that holds each target's JSON (migration 0017), not by computing it", () => {
      // SQLite reads an indexed expression from the index only when the index's expression is TARGET_JSON_SQL itself.
      for (const direction of ['DESC', 'ASC']) {
        const plan = db
          .prepare(`EXPLAIN QUERY PLAN SELECT ${TARGET_JSON_SQL} AS j FROM targets WHERE account_id = ? AND seq < ? ORDER BY seq ${direction} LIMIT ?`)
          .all(accountId, 1e9, 500)
          .map((row) => (row as { detail: string }).detail)
          .join(' | ');
        expect(plan, direction).to.match(/USING COVERING INDEX targets_list_json \(account_id=\? AND seq<\?\)/);
      }
    });

    it('is empty, without a cursor, for an account without targets', () => {
      const other = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'b' }).account.id;
      const page = repository.listJson(other, { filters: {}, sort: [], pageSize: 10, after: undefined }, 1024);
      expect(page).to.deep.equal({ body: new Uint8Array(0), count: 0, nextCursor: undefined });
    });
  });
});
