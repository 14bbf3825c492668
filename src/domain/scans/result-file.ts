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

export type RecordingKind = 'IMPORT' | 'SCAN';

export interface PendingRecording {
  scanId: string;
  accountId: string;
  kind: RecordingKind;
}
