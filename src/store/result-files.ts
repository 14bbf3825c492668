/**
 * Raw scanner output files under VIGIL_DATA_DIR/results/<scan id>/. Each is
 * written to a temporary name, synced, and renamed, so a crash never leaves a
 * half-written file under its final name.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ResultFileStore } from '../app/ports.js';
import { writeFileDurably } from './durable-file.js';

export class FileSystemResultFiles implements ResultFileStore {
  constructor(private readonly root: string) {}

  private pathOf(scanId: string, fileName: string): string {
    // basename: a scanner-chosen name can never climb out of the scan's folder.
    return join(this.root, basename(scanId), basename(fileName));
  }

  async save(scanId: string, fileName: string, content: Uint8Array | readonly Uint8Array[]): Promise<{ size: number; sha256: string }> {
    const path = this.pathOf(scanId, fileName);
    const pieces = content instanceof Uint8Array ? [content] : content;
    await mkdir(join(this.root, basename(scanId)), { recursive: true });
    await writeFileDurably(path, `${path}${PARTIAL}`, pieces);
    const hash = createHash('sha256');
    let size = 0;
    for (const piece of pieces) {
      hash.update(piece);
      size += piece.byteLength;
    }
    return { size, sha256: hash.digest('hex') };
  }

  open(scanId: string, fileName: string): Readable {
    return createReadStream(this.pathOf(scanId, fileName));
  }

  async read(scanId: string, fileName: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.pathOf(scanId, fileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async removeScan(scanId: string): Promise<void> {
    await rm(join(this.root, basename(scanId)), { recursive: true, force: true });
  }

  /**
   * Start-up: removes what a crash left behind, files `keep` refuses
   * (written, but the step recording them never committed) and temporary
   * files. Without `keep` only temporary files go. Returns the removed
   * paths, "<scan id>/<file name>".
   */
  async sweep(keep: (scanId: string, fileName: string) => boolean = () => true): Promise<string[]> {
    const removed: string[] = [];
    for (const scanDir of await listDir(this.root)) {
      const files = await listDir(join(this.root, scanDir));
      const gone = files.filter((file) => file.endsWith(PARTIAL) || !keep(scanDir, file));
      for (const file of gone) await rm(join(this.root, scanDir, file), { recursive: true, force: true });
      if (files.length > 0 && gone.length === files.length) await rm(join(this.root, scanDir), { recursive: true, force: true });
      removed.push(...gone.map((file) => `${scanDir}/${file}`));
    }
    return removed;
  }
}

const PARTIAL = '.partial';

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}
