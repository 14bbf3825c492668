/**
 * Rows read by a list of ids and checked against the account are found by
 * their ids, never by walking the account's index: without statistics
 * SQLite preferred `account_id = ?` on one of the account's indexes and
 * walked all of it for every slice of ids (a 40,020-risk scan's PDF held
 * the event loop 3.3 s among a million risks, bench/scale.ts).
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteScanPdfRepository } from '../../src/store/scan-pdfs-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { planOf } from '../support/query-plan.js';
import { insertRisks } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: rows read by their ids', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    insertRisks(db, 3);
    db.exec(`UPDATE risks SET definition = '{"title":"t","description":"d","solution":"s"}'`);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const byIds = (sql: string) => sql.includes('id IN (');
  // A slice as the scan PDF reads them (IDS_PER_READ): with two ids the planner took the key; with more, the account's index.
  const UNKNOWN = Array.from({ length: 498 }, (_, n) => `unknown-${n}`);
  const SLICE = ['r1', 'r2', ...UNKNOWN];
  const CASES: Array<[string, (db: Database, account: string) => unknown[], RegExp]> = [
    [
      "a scan PDF's risks' severity",
      (db, account) => new SqliteScanPdfRepository(db).severityKeys(account, SLICE),
      /risks USING INDEX sqlite_autoindex_risks_1 \(id=\?\)/,
    ],
    ["a scan PDF's risks", (db, account) => new SqliteScanPdfRepository(db).risks(account, SLICE), /risks USING INDEX sqlite_autoindex_risks_1 \(id=\?\)/],
    [
      "a scan PDF's targets",
      (db, account) => new SqliteScanPdfRepository(db).targets(account, ['t1', ...UNKNOWN]),
      /targets USING INDEX sqlite_autoindex_targets_1 \(id=\?\)/,
    ],
    [
      'targets by id',
      (db, account) => new SqliteTargetRepository(db).findByIds(account, ['t1', ...UNKNOWN]),
      /targets USING INDEX sqlite_autoindex_targets_1 \(id=\?\)/,
    ],
  ];

  for (const [name, read, index] of CASES) {
    it(`${name}: by the primary key, and only the account's`, () => {
      expect(read(db, 'a1'), "the account's rows").to.have.length.greaterThan(0);
      expect(read(db, 'another-account'), "another account's ids").to.deep.equal([]);
      const plan = planOf(db, () => read(db, 'a1'), byIds);
      expect(plan, plan).to.match(index);
      expect(plan, plan).to.not.match(/account/);
    });
  }
});
