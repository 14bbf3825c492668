import type { Migration } from './index.js';

export const m0008ScheduledScans: Migration = {
  version: 8,
  name: 'scheduled scans',
  sql: `
-- A ScheduledScan creates Scans automatically (SPEC.md, Scheduled scans). JSON
-- columns hold arrays of strings; next_run is NULL when no run is left.
CREATE TABLE scheduled_scans (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  account_id         TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name               TEXT,
  schedule           TEXT NOT NULL CHECK (schedule IN ('ONCE', 'DAILY', 'WEEKLY', 'MONTHLY', 'QUARTERLY', 'CUSTOM')),
  scan_types         TEXT NOT NULL,
  filter_target_ids  TEXT NOT NULL,
  filter_tags        TEXT NOT NULL,
  email_notification TEXT NOT NULL CHECK (email_notification IN ('NEVER', 'ON_CHANGES', 'ALWAYS')),
  email_to           TEXT NOT NULL,
  start_time         TEXT NOT NULL,
  schedule_dates     TEXT,
  time_zone          TEXT,
  disabled           INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  next_run           TEXT,
  last_ran           TEXT,
  created_at         TEXT NOT NULL
) STRICT;
CREATE INDEX scheduled_scans_by_account ON scheduled_scans (account_id, seq);
CREATE INDEX scheduled_scans_by_next_run ON scheduled_scans (next_run) WHERE next_run IS NOT NULL;
`,
};
