/**
 * `vigil backup DIR` (CONTRACT.md): a consistent copy of the data directory
 * into DIR, a new or empty folder, while `serve` runs on it or not;
 * `VIGIL_DATA_DIR=DIR vigil serve` starts from it. Exit 2 for a bad DIR.
 */
import { resolve } from 'node:path';
import { loadSettings } from '../config/settings.js';
import { BackupTargetError, backupDataDir } from '../store/data-dir-backup.js';
import { UsageError } from './usage.js';

export async function runBackup(target: string): Promise<number> {
  if (target.trim() === '') throw new UsageError('vigil backup takes one argument, the new or empty folder to write the backup into');
  const { dataDir } = loadSettings();
  if (resolve(target) === dataDir || resolve(target).startsWith(`${dataDir}/`))
    throw new UsageError(`the backup folder ${target} is inside the data directory ${dataDir}; name a folder outside it`);
  try {
    const summary = await backupDataDir(dataDir, resolve(target));
    process.stdout.write(`${JSON.stringify({ backup: resolve(target), files: summary.files, bytes: summary.bytes })}\n`);
    return 0;
  } catch (error) {
    if (error instanceof BackupTargetError) throw new UsageError(error.message);
    throw error;
  }
}
