/**
 * What /readyz asks of the store: every migration this build knows is
 * applied, and new writes can land (the database is not read-only, the data
 * directory is writable and its file system has room). All of it is cheap:
 * one indexed read and two file-system calls off the event loop.
 */
import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { MIGRATIONS } from './migrations/index.js';
import { schemaVersion, type Database } from './database.js';
import type { ReadinessCheck } from '../app/ports/health.js';

/** Below this much free space a result file or a report could no longer be written whole. */
const MIN_FREE_BYTES = 64 * 2 ** 20;

const LATEST_MIGRATION = Math.max(...MIGRATIONS.map((migration) => migration.version));

export function migrationsCheck(db: Database): ReadinessCheck {
  const version = schemaVersion(db);
  if (version >= LATEST_MIGRATION) return { name: 'migrations', ok: true };
  return { name: 'migrations', ok: false, message: `the database is at schema version ${version}, this build needs ${LATEST_MIGRATION}` };
}

export async function storeWritableCheck(db: Database, dataDir: string): Promise<ReadinessCheck> {
  const name = 'store';
  if (db.readonly || !db.open) return { name, ok: false, message: 'the database is not open for writing' };
  try {
    await access(dataDir, constants.W_OK);
    const space = await statfs(dataDir);
    const free = space.bavail * space.bsize;
    if (free < MIN_FREE_BYTES)
      return { name, ok: false, message: `the data directory has ${Math.floor(free / 2 ** 20)} MiB free, less than ${MIN_FREE_BYTES / 2 ** 20} MiB` };
    return { name, ok: true };
  } catch (error) {
    return { name, ok: false, message: `the data directory cannot be written: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}
