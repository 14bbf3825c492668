/**
 * One `vigil serve` per data directory. Two on the same directory would both
 * dispatch every webhook (double sends) and both run the queued scans, so
 * `vigil serve` takes this lock before it opens the database and holds it
 * until it exits.
 *
 * The lock is SQLite's own: a small database, VIGIL_DATA_DIR/serve.lock,
 * opened in `locking_mode=EXCLUSIVE` and written once, so the connection
 * holds an exclusive POSIX record lock (fcntl) on the file for as long as it
 * is open. The kernel drops such a lock with the process however it ends
 * (kill -9, the OOM killer), so a crash never leaves a stale lock, and no pid
 * has to be checked for liveness (in a container the server is pid 1 before
 * and after a restart, so a pidfile would see itself). It has the same
 * filesystem needs as vigil.db: a local filesystem (or a volume mounted by
 * one node), not a network share whose locks are unreliable.
 *
 * serve.lock.owner names the holder (pid, host, start time) for the message
 * a second server prints; it says who, the lock says whether.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

const LOCK_FILE = 'serve.lock';
const LOCK_OWNER_FILE = 'serve.lock.owner';

/** Another process holds the data directory. */
export class DataDirInUseError extends Error {}

export interface DataDirLock {
  /** Lets the directory go (the process ending does the same). */
  release(): void;
}

interface Owner {
  pid: number;
  host: string;
  started_at: string;
}

export function lockDataDir(dataDir: string, now: () => Date = () => new Date()): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  // timeout 0: a held lock is reported at once, not waited for.
  const db = new BetterSqlite3(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside it: the one write is an empty table.
    db.pragma('journal_mode = MEMORY');
    // The exclusive lock is taken here and, in this locking mode, kept after the commit.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirInUseError(inUseMessage(dataDir));
    throw error;
  }
  const ownerPath = join(dataDir, LOCK_OWNER_FILE);
  const owner: Owner = { pid: process.pid, host: hostname(), started_at: now().toISOString() };
  writeFileSync(ownerPath, `${JSON.stringify(owner)}\n`);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      rmSync(ownerPath, { force: true });
      db.close();
    },
  };
}

function inUseMessage(dataDir: string): string {
  const owner = readOwner(dataDir);
  const who = owner === undefined ? 'another vigil serve' : `another vigil serve (pid ${owner.pid} on ${owner.host}, started ${owner.started_at})`;
  return `the data directory ${dataDir} is in use by ${who}; stop that one first, or give this one its own VIGIL_DATA_DIR`;
}

function readOwner(dataDir: string): Owner | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, LOCK_OWNER_FILE), 'utf8').slice(0, 1000)) as Partial<Owner>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string' || typeof parsed.started_at !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host.slice(0, 100), started_at: parsed.started_at.slice(0, 40) };
  } catch {
    return undefined;
  }
}
