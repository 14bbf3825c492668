/**
 * One uploaded result file while it streams in (DESIGN.md decision 11). Its
 * bytes go to the scan type's parser as they arrive, so a hostile file is
 * refused at the first bad byte, and to the file they will be stored as
 * (IncomingResultFile: written as they arrive, renamed into place when the
 * upload is recorded), so the upload holds what the parser holds, not the
 * file. Multipart fields come in any order: when scan_type arrives after the
 * file has started, the bytes written so far are read back and parsed at
 * that moment. The findings go to the recording's staging as they are
 * parsed (RecordingStaging), so the upload does not hold them either. A
 * refused upload must be discarded (removes the file and what was staged).
 */
import { describeBytes, importableScanType, type ImportableScanType } from '../domain/imports/importable.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { FindingSink, ParseResult, ResultParser } from '../domain/risks/finding.js';
import { parserFor } from '../parsers/index.js';
import type { IncomingResultFile } from './ports.js';

export interface ParsedUpload {
  /** The id of the Scan the upload becomes; its file is written in that Scan's folder. */
  scanId: string;
  scanType: ImportableScanType;
  /** The file as written so far, to be committed under its final name. */
  file: IncomingResultFile;
  /** The hosts the file names; its findings are staged under scanId, not here. */
  result: ParseResult;
}

/** Where an upload's findings go as they are parsed, and how to forget them. */
export interface UploadStaging {
  sink: FindingSink;
  drop(): void;
}

/** Findings handed to the staging at once when a parser returns them all at the end (the JSON formats). */
export const STAGE_BATCH = 500;

export class ResultUpload {
  private size = 0;
  private scanType: ImportableScanType | undefined;
  private parser: ResultParser | undefined;

  constructor(
    private readonly maxBytes: number,
    readonly scanId: string,
    private readonly file: IncomingResultFile,
    private readonly staging: UploadStaging,
  ) {}

  useScanType(value: string): void {
    this.scanType = importableScanType(value);
    // A second scan_type field starts the parse over: what the first parser staged goes.
    if (this.parser !== undefined) this.staging.drop();
    this.parser = parserFor(this.scanType, { findings: this.staging.sink });
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
    const result = this.parser.end();
    // The parsers that do not stream their findings (the JSON formats) return them here: staged all the same.
    for (let start = 0; start < result.findings.length; start += STAGE_BATCH) this.staging.sink.add(result.findings.slice(start, start + STAGE_BATCH));
    return { scanId: this.scanId, scanType: this.scanType, file: this.file, result: { ...result, findings: [] } };
  }

  /** Removes what was written: the upload was refused or failed before it was recorded. */
  discard(): Promise<void> {
    this.staging.drop();
    return this.file.discard();
  }
}
