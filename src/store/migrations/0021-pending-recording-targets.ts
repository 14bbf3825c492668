import type { Migration } from './index.js';

export const m0021PendingRecordingTargets: Migration = {
  version: 21,
  name: 'targets a recording in progress created or changed',
  sql: `
-- The journal of a recording in progress (pending_recordings, migration
-- 0013): each target it created (created = 1) or changed, with the fields a
-- recording writes on a target as they were before it (os, hostname,
-- last_scanned_at) and as it last left them. Written in the transaction of
-- the change; read only when the recording is rolled back (a refusal, or
-- start-up after a crash), which deletes the targets it created that no
-- other scan covers and restores each field it still holds as the recording
-- left it; gone with the pending row when the recording ends.
CREATE TABLE pending_recording_targets (
  scan_id               TEXT NOT NULL,
  target_id             TEXT NOT NULL,
  created               INTEGER NOT NULL CHECK (created IN (0, 1)),
  os                    TEXT,
  hostname              TEXT,
  last_scanned_at       TEXT,
  after_os              TEXT,
  after_hostname        TEXT,
  after_last_scanned_at TEXT,
  PRIMARY KEY (scan_id, target_id)
) STRICT, WITHOUT ROWID;
`,
};
