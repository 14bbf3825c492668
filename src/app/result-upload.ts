/**
 * One uploaded result file while it streams in (DESIGN.md decision 11). Its
 * bytes go to the scan type's parser as they arrive, so a hostile file is
 * refused at the first bad byte, and to the file they will be stored as
 * (IncomingResultFile: written as they arrive, renamed into place when the
 * upload is recorded), so the upload holds what the parser holds, not the
 * file. Multipart fields come in any order: when scan_type arrives after the
 * file has started, the bytes written so far are read back and parsed at
 * that moment. A refused upload must be discarded (removes the file).
 */
import { describeBytes, importableScanType, type ImportableScanType } from '../domain/imports/importable.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { ParseResult, ResultParser } from '../domain/risks/finding.js';
import { parserFor } from '../parsers/index.js';
import type { IncomingResultFile } from './ports.js';

export interface ParsedUpload {
  /** The id of the Scan the upload becomes; its file is written in that Scan's folder. */
  scanId: string;
  scanType: ImportableScanType;
  /** The file as written so far, to be committed under its final name. */
  file: IncomingResultFile;
  result: ParseResult;
}

export class ResultUpload {
  private size = 0;
  private scanType: ImportableScanType | undefined;
  private parser: ResultParser | undefined;

  constructor(
    private readonly maxBytes: number,
    readonly scanId: string,
    private readonly file: IncomingResultFile,
  ) {}

  useScanType(value: string): void {
    this.scanType = importableScanType(value);
    this.parser = parserFor(this.scanType);
    for (const piece of this.file.written()) this.parser.write(piece);
  }

  write(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) {
      throw new InvalidRequestError(`the file is larger than ${describeBytes(this.maxBytes)}, the limit for an uploaded result`);
    }
    this.parser?.write(chunk);
    this.file.write(chunk);
  }

  /** The whole file and what it holds; throws when the file is empty or incomplete. */
  finish(): ParsedUpload {
    if (this.scanType === undefined || this.parser === undefined) throw new InvalidRequestError('scan_type is required');
    if (this.size === 0) throw new InvalidRequestError('the file part is empty; upload the scanner output file');
    return { scanId: this.scanId, scanType: this.scanType, file: this.file, result: this.parser.end() };
  }

  /** Removes what was written: the upload was refused or failed before it was recorded. */
  discard(): Promise<void> {
    return this.file.discard();
  }
}
