/**
 * A consistent copy of a data directory, taken while `vigil serve` writes to
 * it (issue 28). The database first, through SQLite's online backup
 * (better-sqlite3's `db.backup()`): a snapshot of one moment, which never
 * blocks the server's writers (WAL). Then the files that rows point at:
 * every result and report file is written under its final name (renamed
 * into place, complete) before the row that names it is committed, so each
 * file a row of the snapshot names already exists when the copy of the
 * files starts. Files written after the snapshot are copied too or not,
 * harmless either way (no row of the copy names them); a file removed
 * meanwhile (its scan deleted) is skipped, and so is a `.partial` one,
 * which is never complete.
 */
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { BackupFolders } from '../app/ports.js';
import { DATABASE_FILE } from './database.js';

/** The folders of files rows point at: result files, staged uploads of running scans, reports. */
const FILE_FOLDERS = ['results', 'uploads', 'reports'] as const;
const PARTIAL = '.partial';

/** The backup's folder cannot take a backup (not empty, or a file): a bad argument. */
export class BackupTargetError extends Error {}

/** The data directory has no database to back up. */
class NothingToBackUpError extends Error {}

export interface BackupSummary {
  /** Files copied beside the database. */
  files: number;
  bytes: number;
}

/** Writes the copy of `dataDir` into `target`, which must be new or empty. */
export async function backupDataDir(dataDir: string, target: string): Promise<BackupSummary> {
  await prepareTarget(target);
  await snapshotDatabase(join(dataDir, DATABASE_FILE), join(target, DATABASE_FILE));
  const summary: BackupSummary = { files: 0, bytes: 0 };
  for (const folder of FILE_FOLDERS) await copyTree(join(dataDir, folder), join(target, folder), summary);
  return summary;
}

async function prepareTarget(target: string): Promise<void> {
  const existing = await stat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing !== undefined && !existing.isDirectory()) throw new BackupTargetError(`${target} is a file; name a new or empty folder for the backup`);
  if (existing !== undefined && (await readdir(target)).length > 0)
    throw new BackupTargetError(`${target} is not empty; name a new or empty folder for the backup`);
  await mkdir(target, { recursive: true });
}

async function snapshotDatabase(source: string, copy: string): Promise<void> {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(source, { fileMustExist: true });
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CANTOPEN')
      throw new NothingToBackUpError(`there is no Vigil database at ${source}; set VIGIL_DATA_DIR to the data directory to back up`);
    throw error;
  }
  try {
    db.pragma('busy_timeout = 5000');
    // All remaining pages in the step after the first: a write by the server between two small steps restarts
    // the copy, and a busy server writes often enough that small steps might never finish. One step reads one
    // snapshot (WAL), which blocks no writer.
    await db.backup(copy, { progress: ({ remainingPages }) => Math.max(remainingPages, 100) });
  } finally {
    db.close();
  }
}

/** Copies a folder's files (not `.partial` ones) into `to`; what vanishes while it is read is skipped. */
async function copyTree(from: string, to: string, summary: BackupSummary): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch(ignoreVanished);
  if (entries === undefined) return;
  await mkdir(to, { recursive: true });
  for (const entry of entries) {
    if (entry.name.endsWith(PARTIAL)) continue;
    const source = join(from, entry.name);
    if (entry.isDirectory()) {
      await copyTree(source, join(to, entry.name), summary);
    } else if (entry.isFile()) {
      const copy = join(to, entry.name);
      const copied = await copyFile(source, copy).then(() => stat(copy), ignoreVanished);
      if (copied === undefined) continue;
      summary.files += 1;
      summary.bytes += copied.size;
    }
  }
}

function ignoreVanished(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

/**
 * Backups as timestamped folders of `root` (scheduled backups): each is
 * written under `<folder>.partial` and renamed when whole, so a backup cut
 * short (a restart mid-copy) is never taken for one, and is removed by the
 * next backup.
 */
export class FileSystemBackupFolders implements BackupFolders {
  constructor(
    private readonly dataDir: string,
    private readonly root: string,
  ) {}

  async write(folder: string): Promise<void> {
    const partial = join(this.root, `${basename(folder)}${PARTIAL}`);
    await rm(partial, { recursive: true, force: true });
    await backupDataDir(this.dataDir, partial);
    await rename(partial, join(this.root, basename(folder)));
    for (const left of (await this.list()).filter((name) => name.endsWith(PARTIAL))) await this.remove(left);
  }

  async list(): Promise<string[]> {
    return (await readdir(this.root).catch(ignoreVanished)) ?? [];
  }

  async remove(folder: string): Promise<void> {
    await rm(join(this.root, basename(folder)), { recursive: true, force: true });
  }
}
