import type { Migration } from './index.js';

export const m0029ScanRowsSwept: Migration = {
  version: 29,
  name: "a deleted scan's detections and risk lists swept in chunks",
  sql: `
-- detections and scan_risks lose their foreign key to scans: deleting a scan
-- of 40,020 risks cascaded to 80,040 rows in the transaction that deleted its
-- row, holding the event loop 224 ms (1.1 s on a database just opened) among
-- a million risks (bench/scale.ts's database). The row now goes
-- alone and its rows are swept a chunk per transaction (src/store/scan-sweeps.ts);
-- scans.seq is AUTOINCREMENT and ids are UUIDs, so rows not yet swept never
-- belong to another scan, and every read reaches them through a scan's row
-- or its coverage, which go at once. The rebuild copies every row: 5.3-7.8 s
-- at the first start on bench/scale.ts's database (1,000,500 detections and
-- as many risk list entries).
CREATE TABLE detections_0029 (
  scan_id TEXT NOT NULL,
  risk_id TEXT NOT NULL REFERENCES risks (id) ON DELETE CASCADE,
  PRIMARY KEY (scan_id, risk_id)
) STRICT, WITHOUT ROWID;
INSERT INTO detections_0029 (scan_id, risk_id) SELECT scan_id, risk_id FROM detections ORDER BY scan_id, risk_id;
DROP TABLE detections;
ALTER TABLE detections_0029 RENAME TO detections;
CREATE INDEX detections_by_risk ON detections (risk_id);

CREATE TABLE scan_risks_0029 (
  scan_seq INTEGER NOT NULL,
  list     INTEGER NOT NULL CHECK (list IN (0, 1, 2)),
  position INTEGER NOT NULL,
  risk_id  TEXT NOT NULL,
  PRIMARY KEY (scan_seq, list, position)
) STRICT, WITHOUT ROWID;
INSERT INTO scan_risks_0029 (scan_seq, list, position, risk_id) SELECT scan_seq, list, position, risk_id FROM scan_risks ORDER BY scan_seq, list, position;
DROP TABLE scan_risks;
ALTER TABLE scan_risks_0029 RENAME TO scan_risks;

-- The scans whose rows are still to be swept: written in the transaction
-- that deletes the scan's row (its seq with it, the row being gone), taken
-- away with its last rows; what a crash leaves is swept at start-up.
CREATE TABLE pending_scan_sweeps (
  scan_id  TEXT PRIMARY KEY,
  scan_seq INTEGER NOT NULL
) STRICT;
`,
};
