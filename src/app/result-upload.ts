/**
 * One uploaded result file while it streams in (DESIGN.md decision 11). Its
 * bytes go to the scan type's parser as they arrive, so a hostile file is
 * refused at the first bad byte, and are kept, up to the size limit, to be
 * stored as the import Scan's result file. Memory stays bounded by the limit.
 * Multipart fields come in any order: when scan_type arrives after the file
 * has started, the bytes received so far are parsed at that moment.
 */
import { describeBytes, importableScanType, type ImportableScanType } from '../domain/imports/importable.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { ParseResult, ResultParser } from '../domain/risks/finding.js';
import { parserFor } from '../parsers/index.js';

export interface ParsedUpload {
  scanType: ImportableScanType;
  /** The file's bytes as they arrived, in order; not joined, so the upload holds one copy of the file. */
  content: readonly Uint8Array[];
  result: ParseResult;
}

export class ResultUpload {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private scanType: ImportableScanType | undefined;
  private parser: ResultParser | undefined;

  constructor(private readonly maxBytes: number) {}

  useScanType(value: string): void {
    this.scanType = importableScanType(value);
    this.parser = parserFor(this.scanType);
    for (const chunk of this.chunks) this.parser.write(chunk);
  }

  write(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) {
      throw new InvalidRequestError(`the file is larger than ${describeBytes(this.maxBytes)}, the limit for an uploaded result`);
    }
    this.chunks.push(chunk);
    this.parser?.write(chunk);
  }

  /** The whole file and what it holds; throws when the file is empty or incomplete. */
  finish(): ParsedUpload {
    if (this.scanType === undefined || this.parser === undefined) throw new InvalidRequestError('scan_type is required');
    if (this.size === 0) throw new InvalidRequestError('the file part is empty; upload the scanner output file');
    return { scanType: this.scanType, content: this.chunks, result: this.parser.end() };
  }
}
