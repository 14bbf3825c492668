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
      const [json] = repository.listJson(accountId, { filters: {}, sort: [], pageSize: 10, after: undefined }).items;
      // The very bytes JSON.stringify writes: same keys, same order, same escapes.
      expect(json).to.equal(JSON.stringify(presentTarget(repository.findById(accountId, target.id)!)));
      expect(json).to.equal(JSON.stringify(presentTarget(target)));
    });
  }
});
