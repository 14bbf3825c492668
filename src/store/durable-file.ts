/**
 * Writes a whole file so that a crash leaves either nothing or all of it
 * under its name: the bytes go to a temporary name, are synced to disk, and
 * the file is renamed into place (a rename within a directory is atomic).
 */
import { open, rename } from 'node:fs/promises';

export async function writeFileDurably(path: string, temporary: string, content: Uint8Array): Promise<void> {
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}
