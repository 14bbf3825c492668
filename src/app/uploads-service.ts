/**
 * Result files uploaded by scanner pods (DESIGN.md decision 1): each Scan
 * gets its own token, only that Scan's upload accepts it, and a file is
 * refused while it streams once it passes the size cap. The file is written
 * to disk as it arrives and read back in pieces, never held whole.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, UnauthenticatedError } from '../domain/errors.js';
import type { ResultFileStore, UploadTokenRepository, WorkloadOutput } from './ports.js';

/** Plain file names only: no directories, no hidden files. */
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

export class UploadsService {
  constructor(
    private readonly tokens: UploadTokenRepository,
    private readonly staging: ResultFileStore,
    private readonly clock: Clock,
    private readonly maxBytes: number,
  ) {}

  /** A new token for the Scan's upload; returns it once, stores only its hash. */
  issueToken(scanId: string): string {
    const token = randomBytes(32).toString('base64url');
    this.tokens.save(scanId, createHash('sha256').update(token).digest(), this.clock.now().toISOString());
    return token;
  }

  /** Throws UnauthenticatedError unless the token is the Scan's. */
  assertToken(scanId: string, presented: string | undefined): void {
    const stored = this.tokens.find(scanId);
    const given = createHash('sha256')
      .update(presented ?? '')
      .digest();
    if (stored === undefined || presented === undefined || presented === '' || !timingSafeEqual(stored, given)) {
      throw new UnauthenticatedError('This upload token is not valid for this scan.');
    }
  }

  /**
   * Stores one uploaded file of the Scan, reading at most maxBytes. Each
   * piece is appended to '<scan id>/<file>.<random>.partial' as it arrives
   * (the import path's IncomingResultFile), so the service holds one piece,
   * not the file; the file is synced and renamed into place once whole, and
   * a refused or interrupted upload removes its temporary file. A retried
   * upload writes its own temporary file and replaces the earlier one whole.
   */
  async accept(
    scanId: string,
    token: string | undefined,
    fileName: string,
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<{ size: number; sha256: string }> {
    this.assertToken(scanId, token);
    if (!FILE_NAME.test(fileName)) {
      throw new InvalidRequestError(
        `'${fileName.slice(0, 100)}' is not an acceptable result file name: letters, digits, '.', '_' and '-' only, at most 100 characters`,
      );
    }
    const file = this.staging.incoming(scanId, `${fileName}.${randomBytes(6).toString('hex')}`);
    try {
      let size = 0;
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (size > this.maxBytes)
          throw new InvalidRequestError(`the file is larger than ${Math.round(this.maxBytes / 1024 / 1024)} MiB, the limit for one result file`);
        file.write(chunk);
      }
      return await file.commit(fileName);
    } catch (error) {
      await file.discard();
      throw error;
    }
  }

  /** The expected files as uploaded (read from disk in pieces when parsed), or the name of the first one missing. */
  async staged(scanId: string, expected: ReadonlyArray<{ file: string; contentType: string }>): Promise<{ outputs: WorkloadOutput[] } | { missing: string }> {
    const outputs: WorkloadOutput[] = [];
    for (const { file, contentType } of expected) {
      if ((await this.staging.sizeOf(scanId, file)) === undefined) return { missing: file };
      outputs.push({ file, contentType, content: () => this.staging.open(scanId, file) });
    }
    return { outputs };
  }

  /** The scan ended: its token is revoked and its staged files removed. */
  async discard(scanId: string): Promise<void> {
    this.tokens.revoke(scanId);
    await this.staging.removeScan(scanId);
  }
}
