import type { Migration } from './index.js';

export const m0004Risks: Migration = {
  version: 4,
  name: 'risks, detections, scan coverage',
  sql: `
CREATE TABLE risks (
  seq               INTEGER PRIMARY KEY AUTOINCREMENT,
  id                TEXT NOT NULL UNIQUE,
  account_id        TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  target_id         TEXT NOT NULL REFERENCES targets (id) ON DELETE CASCADE,
  scan_type         TEXT NOT NULL,
  fingerprint       TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('OPEN', 'CLOSED')),
  first_detected_at TEXT NOT NULL,
  last_detected_at  TEXT NOT NULL,
  is_accepted       INTEGER NOT NULL DEFAULT 0,
  accepted_by       TEXT NOT NULL DEFAULT '[]',
  title             TEXT NOT NULL,
  threat_level      TEXT NOT NULL,
  qod               INTEGER,
  definition        TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  UNIQUE (account_id, target_id, scan_type, fingerprint)
) STRICT;
CREATE INDEX risks_by_account ON risks (account_id, seq);
CREATE INDEX risks_by_target ON risks (target_id, scan_type, status);

-- Which targets a scan really scanned, for which type: a risk closes only
-- when a later scan covered its target and type, and histories are
-- recomputed from what remains when a scan is deleted.
CREATE TABLE scan_coverage (
  scan_id    TEXT NOT NULL REFERENCES scans (id) ON DELETE CASCADE,
  target_id  TEXT NOT NULL REFERENCES targets (id) ON DELETE CASCADE,
  scan_type  TEXT NOT NULL,
  covered_at TEXT NOT NULL,
  PRIMARY KEY (scan_id, target_id)
) STRICT;
CREATE INDEX scan_coverage_by_target ON scan_coverage (target_id, scan_type, covered_at);

CREATE TABLE detections (
  scan_id TEXT NOT NULL REFERENCES scans (id) ON DELETE CASCADE,
  risk_id TEXT NOT NULL REFERENCES risks (id) ON DELETE CASCADE,
  PRIMARY KEY (scan_id, risk_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX detections_by_risk ON detections (risk_id);
`,
};
