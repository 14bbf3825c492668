/**
 * A Scan's stored result files, and the risk recordings in progress. Moved from src/app/ports/scans.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
export interface StoredResultFile {
  id: string;
  scanId: string;
  accountId: string;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

/**
 * A result file as it is recorded with its scan's final state. `content`: a
 * scanner output of up to RESULT_IN_ROW_MAX_BYTES is kept in the database
 * row, written in the transaction that records SUCCEEDED (one durable commit
 * instead of a file's fsync and rename, then the commit's); absent, the file
 * is on disk (result files store).
 */
export interface NewResultFile extends StoredResultFile {
  content?: Uint8Array;
  /**
   * Its bytes are made after the row is committed (the scan's PDF): a
   * pending_result_files row marks it until its file is written (size and
   * sha256 are set then).
   */
  rendersLater?: boolean;
}

/** The largest scanner output kept in its result row rather than in a file of its own: 1 MiB. */
export const RESULT_IN_ROW_MAX_BYTES = 1024 * 1024;

export type RecordingKind = 'IMPORT' | 'SCAN';

export interface PendingRecording {
  scanId: string;
  accountId: string;
  kind: RecordingKind;
}
