import type { Migration } from './index.js';

export const m0002ScansResultsEvents: Migration = {
  version: 2,
  name: 'scans, result files, event outbox',
  sql: `
CREATE TABLE scans (
  seq               INTEGER PRIMARY KEY AUTOINCREMENT,
  id                TEXT NOT NULL UNIQUE,
  account_id        TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name              TEXT NOT NULL,
  type              TEXT NOT NULL,
  state             TEXT NOT NULL CHECK (state IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'STOPPING', 'STOPPED', 'FAILED', 'OVER_LIMIT')),
  progress          INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  is_authenticated  INTEGER NOT NULL DEFAULT 0,
  requested_targets TEXT NOT NULL,
  resolved_targets  TEXT NOT NULL DEFAULT '[]',
  skipped_targets   TEXT NOT NULL DEFAULT '[]',
  conditions        TEXT NOT NULL DEFAULT '[]',
  risks             TEXT NOT NULL DEFAULT '{"newOpen":[],"stillOpen":[],"closed":[]}',
  scheduled_by      TEXT,
  report_id         TEXT,
  created_at        TEXT NOT NULL,
  started_at        TEXT,
  finished_at       TEXT,
  UNIQUE (account_id, name)
) STRICT;
CREATE INDEX scans_by_account ON scans (account_id, seq);
CREATE INDEX scans_by_state ON scans (state, seq);
CREATE INDEX scans_by_account_created ON scans (account_id, created_at);

-- Scans that count against the monthly limit, per account and UTC month.
-- Kept apart from scans so that deleting a scan does not hand its slot back.
CREATE TABLE scan_usage (
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  month      TEXT NOT NULL,
  scans      INTEGER NOT NULL,
  PRIMARY KEY (account_id, month)
) STRICT;

CREATE TABLE scan_results (
  id           TEXT PRIMARY KEY,
  scan_id      TEXT NOT NULL REFERENCES scans (id) ON DELETE CASCADE,
  account_id   TEXT NOT NULL,
  file_name    TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size         INTEGER NOT NULL,
  sha256       TEXT NOT NULL,
  created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX scan_results_by_scan ON scan_results (scan_id);

-- The transactional outbox (DESIGN.md decision 8): an event is written in
-- the same transaction as the change it describes.
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_account ON events (account_id, seq);
`,
};
