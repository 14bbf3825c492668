import type { Migration } from './index.js';

export const m0028PendingScanForgets: Migration = {
  version: 28,
  name: 'the risks a deleted scan leaves to recompute',
  sql: `
-- The (target, scan type) pairs a deleted scan covered whose risks are still
-- to be recomputed from the detections that remain (src/app/risk-history.ts):
-- written in the transaction that deletes the scan, taken away as each chunk
-- of the recompute commits; what a crash leaves is finished at start-up.
CREATE TABLE pending_scan_forgets (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  scan_id    TEXT NOT NULL,
  account_id TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  scan_type  TEXT NOT NULL
) STRICT;
CREATE INDEX pending_scan_forgets_by_scan ON pending_scan_forgets (scan_id, seq);
`,
};
