import type { Migration } from './index.js';

export const m0012Reports: Migration = {
  version: 12,
  name: 'reports',
  sql: `
-- One row per report. Its snapshot and rendered files live under
-- VIGIL_DATA_DIR/reports/<id>/ and are written before the row, so a row
-- always has its snapshot.
CREATE TABLE reports (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  format        TEXT NOT NULL CHECK (format IN ('PDF', 'HTML', 'CSV')),
  filters       TEXT NOT NULL,
  risk_count    INTEGER NOT NULL CHECK (risk_count >= 0),
  matched_risks INTEGER NOT NULL CHECK (matched_risks >= risk_count),
  target_count  INTEGER NOT NULL CHECK (target_count >= 0),
  created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX reports_by_account ON reports (account_id, seq);
`,
};
