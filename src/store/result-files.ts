/**
 * Raw scanner output files under VIGIL_DATA_DIR/results/<scan id>/. Each is
 * written to a temporary name, synced, and renamed, so a crash never leaves a
 * half-written file under its final name.
 */
import { Buffer } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, fsync, mkdirSync, openSync, readSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { IncomingResultFile, ResultFileStore } from '../app/ports.js';
import { writeFileDurably } from './durable-file.js';

export class FileSystemResultFiles implements ResultFileStore {
  constructor(private readonly root: string) {}

  private pathOf(scanId: string, fileName: string): string {
    // basename: a scanner-chosen name can never climb out of the scan's folder.
    return join(this.root, basename(scanId), basename(fileName));
  }

  async save(
    scanId: string,
    fileName: string,
    content: Uint8Array | readonly Uint8Array[] | AsyncIterable<Uint8Array>,
  ): Promise<{ size: number; sha256: string }> {
    if (isAsyncIterable(content)) return this.saveStreamed(scanId, fileName, content);
    if (content instanceof Uint8Array && content.byteLength <= SMALL_FILE_BYTES) return this.saveSmall(scanId, fileName, content);
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

  /**
   * A small file (a scan's output read into memory) written as IncomingFile
   * writes a piece: created and written synchronously (to the page cache),
   * then synced and renamed into place. Two trips through the thread pool
   * instead of six (mkdir, open, write, sync, close, rename), each of which
   * waits behind the other scans' file steps (bench/scans.ts).
   */
  private async saveSmall(scanId: string, fileName: string, content: Uint8Array): Promise<{ size: number; sha256: string }> {
    const file = this.incoming(scanId, `${basename(fileName)}.${randomBytes(6).toString('hex')}`);
    try {
      file.write(content);
      return await file.commit(fileName);
    } catch (error) {
      await file.discard();
      throw error;
    }
  }

  incoming(scanId: string, name = 'upload'): IncomingResultFile {
    const folder = join(this.root, basename(scanId));
    return new IncomingFile(folder, join(folder, `${basename(name)}${PARTIAL}`));
  }

  /** A stream of pieces written as they come (IncomingFile), so it holds one piece at a time. */
  private async saveStreamed(scanId: string, fileName: string, content: AsyncIterable<Uint8Array>): Promise<{ size: number; sha256: string }> {
    // A name of its own: two writers of the same file never share a temporary file.
    const file = this.incoming(scanId, `${basename(fileName)}.${randomBytes(6).toString('hex')}`);
    try {
      for await (const piece of content) file.write(piece);
      return await file.commit(fileName);
    } catch (error) {
      await file.discard();
      throw error;
    }
  }

  async sizeOf(scanId: string, fileName: string): Promise<number | undefined> {
    try {
      const stats = await stat(this.pathOf(scanId, fileName));
      return stats.isFile() ? stats.size : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
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
/** In-memory files up to this size are saved with synchronous writes (saveSmall); a larger one with writes in the thread pool. */
const SMALL_FILE_BYTES = 1024 * 1024;
/** How much of a file written so far is read back at a time. */
const READ_BACK_BYTES = 256 * 1024;

/**
 * An uploaded file written as it arrives (DESIGN.md decision 11): each piece
 * is appended with a synchronous write (to the page cache, cheaper than
 * parsing the same piece) and hashed, so the upload holds none of the file.
 * The folder and file are created at the first piece; commit() fsyncs and
 * renames '<scan id>/upload.partial' to its final name. A crash leaves a
 * '.partial' file, which the start-up sweep removes.
 */
class IncomingFile implements IncomingResultFile {
  private fd: number | undefined;
  private readonly hash = createHash('sha256');
  private size = 0;
  private closed = false;
  private committed = false;

  constructor(
    private readonly folder: string,
    private readonly temporary: string,
  ) {}

  write(chunk: Uint8Array): void {
    if (this.closed) throw new Error('IncomingFile.write after commit or discard');
    if (this.fd === undefined) {
      mkdirSync(this.folder, { recursive: true });
      this.fd = openSync(this.temporary, 'w+');
    }
    for (let offset = 0; offset < chunk.byteLength;) offset += writeSync(this.fd, chunk, offset, chunk.byteLength - offset, this.size + offset);
    this.hash.update(chunk);
    this.size += chunk.byteLength;
  }

  *written(): Generator<Uint8Array> {
    if (this.fd === undefined) return;
    for (let position = 0; position < this.size;) {
      const piece = Buffer.allocUnsafe(Math.min(READ_BACK_BYTES, this.size - position));
      const read = readSync(this.fd, piece, 0, piece.length, position);
      if (read === 0) throw new Error(`${this.temporary} is shorter than what was written to it`);
      position += read;
      yield piece.subarray(0, read);
    }
  }

  async commit(fileName: string): Promise<{ size: number; sha256: string }> {
    if (this.closed) throw new Error('IncomingFile committed after commit or discard');
    if (this.fd === undefined) this.write(new Uint8Array(0));
    const fd = this.fd!;
    this.closed = true;
    try {
      await fsyncAsync(fd);
    } finally {
      closeSync(fd);
    }
    await rename(this.temporary, join(this.folder, basename(fileName)));
    this.committed = true;
    return { size: this.size, sha256: this.hash.digest('hex') };
  }

  /**
   * Removes the temporary file, and the folder when nothing else is in it
   * (an in-cluster upload's folder holds the scan's other files). Once
   * committed, the file is its scan's to remove (ImportsService discards the
   * scan on a later failure).
   */
  async discard(): Promise<void> {
    if (this.committed) return;
    if (this.fd !== undefined && !this.closed) closeSync(this.fd);
    this.closed = true;
    // Synchronous, as the first write's mkdir and open are: another upload of the scan starting now never finds its folder gone between the two.
    rmSync(this.temporary, { force: true });
    try {
      rmdirSync(this.folder);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  }
}

const fsyncAsync = promisify(fsync);

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** A folder's entries; none when it does not exist (yet). */
export async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}
