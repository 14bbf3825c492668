/**
 * Writes a whole file so that a crash leaves either nothing or all of it
 * under its name: the bytes go to a temporary name, are synced to disk, and
 * the file is renamed into place (a rename within a directory is atomic).
 */
import { open, rename } from 'node:fs/promises';

export async function writeFileDurably(path: string, temporary: string, content: Uint8Array | readonly Uint8Array[]): Promise<void> {
  const handle = await open(temporary, 'w');
  try {
    // Pieces are written one after another, so a file that arrived in pieces is never joined in memory.
    if (content instanceof Uint8Array) await handle.writeFile(content);
    else for (const piece of content) await handle.writeFile(piece);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}
