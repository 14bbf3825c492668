import type { Migration } from './index.js';

export const m0023PendingResultFiles: Migration = {
  version: 23,
  name: 'result files whose bytes are made after the scan is recorded',
  sql: `
-- A SUCCEEDED scan's PDF (issue 26) is listed in its results in the
-- transaction that records SUCCEEDED, and rendered right after that commit
-- (rendering takes turns of the event loop; the transaction cannot wait for
-- it). Its row here lives until its file is on disk under its name: one found
-- at start-up was cut short by a crash and is rendered again, and a download
-- meanwhile renders it first. Deleting the scan (or the result) drops it.
CREATE TABLE pending_result_files (
  result_id  TEXT PRIMARY KEY REFERENCES scan_results (id) ON DELETE CASCADE,
  scan_id    TEXT NOT NULL,
  account_id TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
`,
};
