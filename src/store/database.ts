/**
 * The SQLite database under VIGIL_DATA_DIR: WAL mode so that the CLI and the
 * server can share it, full synchronous commits so that a crash loses no
 * committed write, foreign keys on, and every migration applied at open.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export type Database = BetterSqlite3.Database;

export const DATABASE_FILE = 'vigil.db';

export function openDatabase(dataDir: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  mkdirSync(dataDir, { recursive: true });
  const db = new BetterSqlite3(join(dataDir, DATABASE_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  applyMigrations(db, migrations);
  return db;
}

/**
 * A read-only connection to the service's database, for a worker thread
 * that reads beside the service's own connection (WAL mode lets readers run
 * while it writes). The service opened the file and applied every migration.
 */
export function openReadOnlyDatabase(dataDir: string): Database {
  const db = new BetterSqlite3(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

export function schemaVersion(db: Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
  return row.version ?? 0;
}

export function applyMigrations(db: Database, migrations: readonly Migration[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  // IMMEDIATE: a second process opening the same directory waits instead of
  // applying the same migration twice.
  const apply = db.transaction((migration: Migration) => {
    const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version);
    if (done) return;
    db.exec(migration.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
  });
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    apply.immediate(migration);
  }
}

/**
 * SQLite's data_version: it moves whenever another connection (another
 * process on the same data directory, such as `vigil accounts create`)
 * has committed since this one last looked; this connection's own commits
 * leave it alone. A read of the file's header, no table.
 */
export function dataVersion(db: Database): number {
  return db.pragma('data_version', { simple: true }) as number;
}

/**
 * Fills the connection's page cache (better-sqlite3 sets 16,000 KiB) with
 * the newest risks' pages, before the service takes requests: the pages
 * lists read first, and the cache's memory in place. Until the cache is
 * full each page read into it takes a new slot, and on these virtual
 * machines every new page of memory costs a fault; the first walk of a tag
 * list after a start (1,700 pages) took 69 ms, and 26 ms once the cache had
 * its memory. Reads 1,000 rows a statement until the cache's size has been
 * read or no risk is left; returns the bytes read (their text, an estimate of
 * the pages).
 */
export function warmPageCache(db: Database): number {
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  const target = cacheSize < 0 ? -cacheSize * 1024 : cacheSize * (db.pragma('page_size', { simple: true }) as number);
  const older = db.prepare('SELECT seq, length(CAST(definition AS BLOB)) + 100 AS bytes FROM risks WHERE seq < ? ORDER BY seq DESC LIMIT 1000');
  let read = 0;
  let before = Number.MAX_SAFE_INTEGER;
  while (read < target) {
    const rows = older.all(before) as Array<{ seq: number; bytes: number }>;
    if (rows.length === 0) break;
    for (const row of rows) read += row.bytes;
    before = rows.at(-1)!.seq;
  }
  return read;
}

/** A random secret generated once per installation and kept in the database. */
export function serviceSecret(db: Database, name: string): Buffer {
  db.prepare('INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32));
  return (db.prepare('SELECT value FROM service_secrets WHERE name = ?').get(name) as { value: Buffer }).value;
}
