import type { Migration } from './index.js';

export const m0022ScanResourceMarks: Migration = {
  version: 22,
  name: 'what Vigil knows of a custom resource beyond its record',
  sql: `
-- Scans and ScheduledScans deleted through the API (their ids, UUIDs): their
-- custom resource goes after them. A resource whose record is gone without
-- an entry here is not deleted: the database was restored from an older
-- backup (RecordMissing). The Kubernetes runtime forgets an entry once the
-- resource is gone; the newest 10 000 are kept at most
-- (src/store/scan-resource-marks.ts).
CREATE TABLE record_deletions (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  record_id  TEXT NOT NULL UNIQUE,
  deleted_at TEXT NOT NULL
);
-- Scans whose Scan resource Vigil deleted on purpose (ttlSecondsAfterFinished,
-- a ScheduledScan's history limits): it is not created again, and its
-- deletion keeps the record.
CREATE TABLE scan_resources_expired (
  scan_id    TEXT PRIMARY KEY REFERENCES scans (id) ON DELETE CASCADE,
  expired_at TEXT NOT NULL
);
-- A schedule's finished Scans, newest first, for its history limits.
CREATE INDEX scans_scheduled_by_finished ON scans (scheduled_by, finished_at) WHERE scheduled_by IS NOT NULL;
`,
};
