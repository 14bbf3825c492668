import type { Migration } from './index.js';

export const m0010ScheduledRuns: Migration = {
  version: 10,
  name: 'scheduled scan object names and runs',
  sql: `
-- The ScheduledScan's object name: the custom resource's name on Kubernetes
-- (kept as applied with kubectl), and the stem of the deterministic names of
-- the Scans each run creates.
ALTER TABLE scheduled_scans ADD COLUMN object_name TEXT;
UPDATE scheduled_scans SET object_name = 'scheduledscan-' || id;
CREATE UNIQUE INDEX scheduled_scans_by_object_name ON scheduled_scans (account_id, object_name);

-- One row per run of a schedule: the primary key makes a run happen once even
-- when two controllers reach it. The e-mail settings are copied at run time, so
-- editing or deleting the schedule later does not change what the run promised.
-- notification: PENDING until every Scan of the run is terminal and the mail is
-- sent (or not needed); a failed send is retried at next_email_at.
CREATE TABLE scheduled_runs (
  scheduled_scan_id  TEXT NOT NULL,
  run_at             TEXT NOT NULL,
  account_id         TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  schedule_name      TEXT NOT NULL,
  started_at         TEXT NOT NULL,
  scan_ids           TEXT NOT NULL,
  skipped            TEXT NOT NULL,
  email_notification TEXT NOT NULL CHECK (email_notification IN ('NEVER', 'ON_CHANGES', 'ALWAYS')),
  email_to           TEXT NOT NULL,
  notification       TEXT NOT NULL CHECK (notification IN ('PENDING', 'SENT', 'NOT_NEEDED', 'FAILED')),
  email_attempts     INTEGER NOT NULL DEFAULT 0,
  next_email_at      TEXT NOT NULL,
  last_error         TEXT,
  PRIMARY KEY (scheduled_scan_id, run_at)
) STRICT, WITHOUT ROWID;
CREATE INDEX scheduled_runs_pending ON scheduled_runs (next_email_at) WHERE notification = 'PENDING';
`,
};
