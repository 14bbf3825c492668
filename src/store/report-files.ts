/**
 * Reports under VIGIL_DATA_DIR/reports/<report id>/: the snapshot
 * (gzipped JSON) and one file per rendered format. Each is written to a
 * temporary name, synced, and renamed, so a crash or a failed rendering never
 * leaves a half-written file under its final name, and two downloads that
 * render the same format at once each rename a complete file.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { ReportFiles } from '../app/ports.js';
import { writeFileDurably } from './durable-file.js';
import { EXTENSIONS, type ReportFormat, type ReportSnapshot } from '../domain/reports/snapshot.js';

const SNAPSHOT_FILE = 'snapshot.json.gz';
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export class FileSystemReportFiles implements ReportFiles {
  constructor(private readonly root: string) {}

  private dirOf(reportId: string): string {
    // basename: an id can never climb out of the reports folder.
    return join(this.root, basename(reportId));
  }

  private temporaryName(path: string): string {
    return `${path}.${randomBytes(6).toString('hex')}.partial`;
  }

  async saveSnapshot(reportId: string, snapshot: ReportSnapshot): Promise<void> {
    const dir = this.dirOf(reportId);
    await mkdir(dir, { recursive: true });
    const content = await gzipAsync(Buffer.from(JSON.stringify(snapshot), 'utf8'));
    const path = join(dir, SNAPSHOT_FILE);
    await writeFileDurably(path, this.temporaryName(path), content);
  }

  async loadSnapshot(reportId: string): Promise<ReportSnapshot | undefined> {
    try {
      const content = await readFile(join(this.dirOf(reportId), SNAPSHOT_FILE));
      return JSON.parse((await gunzipAsync(content)).toString('utf8')) as ReportSnapshot;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async saveRendering(reportId: string, format: ReportFormat, write: (out: Writable) => Promise<void>): Promise<void> {
    const dir = this.dirOf(reportId);
    await mkdir(dir, { recursive: true });
    const path = join(dir, `report.${EXTENSIONS[format]}`);
    const temporary = this.temporaryName(path);
    // flush: the file is synced to disk before it closes, so the rename publishes complete bytes.
    const out = createWriteStream(temporary, { flush: true });
    try {
      // The renderer ends the stream once it has written everything; finished waits for the close.
      await write(out);
      await finished(out);
    } catch (error) {
      out.destroy();
      await rm(temporary, { force: true });
      throw error;
    }
    await rename(temporary, path);
  }

  async openRendering(reportId: string, format: ReportFormat): Promise<{ content: Readable; size: number } | undefined> {
    const path = join(this.dirOf(reportId), `report.${EXTENSIONS[format]}`);
    try {
      // One handle for the size and the bytes: a rendering renamed into place meanwhile cannot make them disagree.
      const handle = await open(path, 'r');
      const { size } = await handle.stat();
      return { content: handle.createReadStream(), size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}
