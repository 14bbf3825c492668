import type { Migration } from './index.js';

export const m0025ScanRiskLists: Migration = {
  version: 25,
  name: "a scan's risk lists in rows of their own",
  sql: `
-- A scan's new_open, still_open and closed risk ids (list 0, 1, 2), in the
-- order the scan recorded them. They were one JSON column of the scan row,
-- read and parsed with every scan a list or the dashboard touched (an account
-- with a million risks: 43.7 MB of JSON for 28 scans, GET /v1/scans 0.75 s);
-- now a page reads the rows of its own scans only, by this key.
CREATE TABLE scan_risks (
  scan_seq INTEGER NOT NULL REFERENCES scans (seq) ON DELETE CASCADE,
  list     INTEGER NOT NULL CHECK (list IN (0, 1, 2)),
  position INTEGER NOT NULL,
  risk_id  TEXT NOT NULL,
  PRIMARY KEY (scan_seq, list, position)
) STRICT, WITHOUT ROWID;
INSERT INTO scan_risks (scan_seq, list, position, risk_id)
  SELECT s.seq, 0, j.key, j.value FROM scans s, json_each(s.risks, '$.newOpen') j
  UNION ALL SELECT s.seq, 1, j.key, j.value FROM scans s, json_each(s.risks, '$.stillOpen') j
  UNION ALL SELECT s.seq, 2, j.key, j.value FROM scans s, json_each(s.risks, '$.closed') j;

-- The lists' lengths, for what only counts them (the dashboard's trend,
-- 0026) without reading the lists.
ALTER TABLE scans ADD COLUMN new_open_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scans ADD COLUMN still_open_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scans ADD COLUMN closed_count INTEGER NOT NULL DEFAULT 0;
UPDATE scans SET new_open_count = json_array_length(risks, '$.newOpen'), still_open_count = json_array_length(risks, '$.stillOpen'),
  closed_count = json_array_length(risks, '$.closed');
ALTER TABLE scans DROP COLUMN risks;
`,
};
