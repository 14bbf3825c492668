import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DATABASE_FILE, applyMigrations, openDatabase, schemaVersion, serviceSecret, warmPageCache } from '../../src/store/database.js';
import { AccountsService } from '../../src/app/accounts-service.js';
import { systemClock } from '../../src/domain/clock.js';
import { SqliteAccountRepository } from '../../src/store/accounts-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { seedRisks } from '../support/report-data.js';
import { aTarget } from '../support/targets.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { tempDir } from '../support/temp-dir.js';

/** The newest migration's version: the schema version of an up-to-date database. */
const LATEST = MIGRATIONS.at(-1)!.version;

describe('store: the SQLite database', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  it('creates a real database file under the data directory, in WAL mode with foreign keys on', () => {
    const db = openDatabase(join(dir.path, 'nested', 'data'));
    try {
      expect(existsSync(join(dir.path, 'nested', 'data', DATABASE_FILE))).to.equal(true);
      expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
      expect(db.pragma('foreign_keys', { simple: true })).to.equal(1);
      expect(db.pragma('synchronous', { simple: true })).to.equal(2); // FULL
    } finally {
      db.close();
    }
  });

  it('numbers migrations 1, 2, 3... without repeats or gaps', () => {
    const versions = MIGRATIONS.map((migration) => migration.version);
    expect(versions).to.deep.equal(Array.from({ length: LATEST }, (_, index) => index + 1));
  });

  it('applies every migration at open and records each once', () => {
    const db = openDatabase(dir.path);
    try {
      expect(schemaVersion(db)).to.equal(LATEST);
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
      expect(rows).to.deep.equal(MIGRATIONS.map(({ version, name }) => ({ version, name })));
    } finally {
      db.close();
    }
  });

  it('re-opening an up-to-date database applies nothing and keeps the data', () => {
    const first = openDatabase(dir.path);
    first.prepare("INSERT INTO service_secrets (name, value) VALUES ('probe', x'01')").run();
    first.close();
    const second = openDatabase(dir.path);
    try {
      expect(second.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).to.deep.equal({ n: MIGRATIONS.length });
      expect(second.prepare("SELECT value FROM service_secrets WHERE name = 'probe'").get()).to.deep.equal({ value: Buffer.from([1]) });
    } finally {
      second.close();
    }
  });

  for (const migration of MIGRATIONS) {
    it(`migration ${migration.version} (${migration.name}) applies on top of the ones before it`, () => {
      const db = new BetterSqlite3(':memory:');
      try {
        const before = MIGRATIONS.filter((m) => m.version < migration.version);
        applyMigrations(db, before);
        expect(schemaVersion(db)).to.equal(before.at(-1)?.version ?? 0);
        applyMigrations(
          db,
          MIGRATIONS.filter((m) => m.version <= migration.version),
        );
        expect(schemaVersion(db)).to.equal(migration.version);
        expect(db.pragma('foreign_key_check')).to.deep.equal([]);
      } finally {
        db.close();
      }
    });
  }

  it('rolls a failing migration back whole and leaves the version where it was', () => {
    const db = new BetterSqlite3(':memory:');
    try {
      applyMigrations(db, MIGRATIONS);
      const broken = { version: LATEST + 1, name: 'broken', sql: 'CREATE TABLE half_done (x INTEGER); SELECT * FROM no_such_table;' };
      expect(() => applyMigrations(db, [...MIGRATIONS, broken])).to.throw(/no_such_table/);
      expect(schemaVersion(db)).to.equal(LATEST);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half_done'").get()).to.equal(undefined);
    } finally {
      db.close();
    }
  });

  it("warming the page cache reads the newest risks until the cache's size, or all of them when they fit", () => {
    const db = openDatabase(dir.path);
    try {
      expect(warmPageCache(db)).to.equal(0);
      const accountId = new AccountsService(new SqliteAccountRepository(db), systemClock).createAccount({ name: 'acme' }).account.id;
      const target = aTarget(accountId, 'host.example.com');
      new SqliteTargetRepository(db).insert(target);
      seedRisks(
        db,
        Array.from({ length: 2_000 }, () => ({ accountId, targetId: target.id, description: 'x'.repeat(1_000) })),
      );
      const all = (db.prepare('SELECT SUM(length(CAST(definition AS BLOB)) + 100) AS n FROM risks').get() as { n: number }).n;
      // better-sqlite3's 16,000 KiB hold them all.
      expect(warmPageCache(db)).to.equal(all);
      db.pragma('cache_size = -256');
      const read = warmPageCache(db);
      expect(read).to.be.at.least(256 * 1024);
      expect(read).to.be.below(256 * 1024 + 1_000 * 1_400); // one statement of 1,000 rows past it at most
    } finally {
      db.close();
    }
  });

  it('keeps one service secret per name across opens', () => {
    const db = openDatabase(dir.path);
    const secret = serviceSecret(db, 'page-token-key');
    expect(secret).to.have.length(32);
    expect(serviceSecret(db, 'page-token-key').equals(secret)).to.equal(true);
    expect(serviceSecret(db, 'another').equals(secret)).to.equal(false);
    db.close();
    const reopened = openDatabase(dir.path);
    expect(serviceSecret(reopened, 'page-token-key').equals(secret)).to.equal(true);
    reopened.close();
  });
});
