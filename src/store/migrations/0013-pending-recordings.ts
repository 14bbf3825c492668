import type { Migration } from './index.js';

export const m0013PendingRecordings: Migration = {
  version: 13,
  name: 'risk recordings in progress',
  sql: `
-- A finished scan or an upload records its risks in several short
-- transactions so that it never holds the event loop for long (issue 16).
-- Its row here lives from before its first write to its last; a row found at
-- start-up is a recording a crash cut short, which is rolled back then (an
-- upload entirely; a scan Vigil ran keeps its row and fails as WorkloadLost).
-- No foreign key: the row may come before the scan's.
CREATE TABLE pending_recordings (
  scan_id    TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('IMPORT', 'SCAN')),
  started_at TEXT NOT NULL
) STRICT;
`,
};
