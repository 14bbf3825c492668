/**
 * Reports under VIGIL_DATA_DIR/reports/<report id>/: the snapshot
 * (gzipped JSON) and one file per rendered format. Each is written to a
 * temporary name, synced, and renamed, so a crash or a failed rendering never
 * leaves a half-written file under its final name, and two downloads that
 * render the same format at once each rename a complete file.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGzip, gunzip } from 'node:zlib';
import type { ReportFiles } from '../app/ports.js';
import { EXTENSIONS, type ReportFormat, type ReportSnapshot } from '../domain/reports/snapshot.js';
import { listDir } from './result-files.js';

const SNAPSHOT_FILE = 'snapshot.json.gz';
const gunzipAsync = promisify(gunzip);

/** The snapshot's JSON in pieces of about 64 KiB: everything but the risks, then the risks one by one. */
export function* snapshotJson(snapshot: ReportSnapshot): Generator<string> {
  const { risks, ...rest } = snapshot;
  const head = JSON.stringify(rest);
  let piece = `${head.slice(0, -1)}${head === '{}' ? '' : ','}"risks":[`;
  for (const [index, risk] of risks.entries()) {
    piece += `${index === 0 ? '' : ','}${JSON.stringify(risk)}`;
    if (piece.length >= 64 * 1024) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}]}`;
}

export class FileSystemReportFiles implements ReportFiles {
  constructor(private readonly root: string) {}

  private dirOf(reportId: string): string {
    // basename: an id can never climb out of the reports folder.
    return join(this.root, basename(reportId));
  }

  private temporaryName(path: string): string {
    return `${path}.${randomBytes(6).toString('hex')}.partial`;
  }

  /**
   * Streams the snapshot through gzip into its file, so that its JSON (13 MB for the 10,000 risks of bench/reports.ts) is never held whole, nor a
   * gzipped copy of it.
   */
  async saveSnapshot(reportId: string, snapshot: ReportSnapshot): Promise<void> {
    const dir = this.dirOf(reportId);
    await mkdir(dir, { recursive: true });
    const path = join(dir, SNAPSHOT_FILE);
    const temporary = this.temporaryName(path);
    try {
      // flush: synced to disk before it closes, so the rename publishes complete bytes.
      await pipeline(Readable.from(snapshotJson(snapshot)), createGzip(), createWriteStream(temporary, { flush: true }));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await rename(temporary, path);
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

  async sizeOf(reportId: string, format: ReportFormat): Promise<number | undefined> {
    try {
      return (await stat(join(this.dirOf(reportId), `report.${EXTENSIONS[format]}`))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async remove(reportId: string): Promise<void> {
    // A recursive removal: only ever of one report's own folder, never the reports folder or above it.
    if (!/^[A-Za-z0-9-]+$/.test(reportId)) throw new Error(`refusing to remove the files of report id ${JSON.stringify(reportId)}`);
    await rm(this.dirOf(reportId), { recursive: true, force: true });
  }

  /**
   * Start-up: a report's row is written last, so a folder without one is a
   * report a crash (or a failed rendering) cut short, and goes whole; in a
   * folder that has its row, temporary files a crash left go. Returns what
   * was removed, as 'reports/<id>[/<file>]'.
   */
  async sweep(hasRow: (reportId: string) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const reportId of await listDir(this.root)) {
      if (!hasRow(reportId)) {
        await rm(join(this.root, reportId), { recursive: true, force: true });
        removed.push(`reports/${reportId}`);
        continue;
      }
      for (const file of (await listDir(join(this.root, reportId))).filter((name) => name.endsWith('.partial'))) {
        await rm(join(this.root, reportId, file), { force: true });
        removed.push(`reports/${reportId}/${file}`);
      }
    }
    return removed;
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
