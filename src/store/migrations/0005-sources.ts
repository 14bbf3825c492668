import type { Migration } from './index.js';

export const m0005Sources: Migration = {
  version: 5,
  name: 'sources, imported scans, host facts on targets',
  sql: `
-- An IMPORTED source collects scanner results the customer ran elsewhere and uploaded (SPEC.md, Imported results).
CREATE TABLE sources (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  source_type TEXT NOT NULL CHECK (source_type IN ('IMPORTED')),
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX sources_by_account ON sources (account_id, seq);

-- Each upload becomes a SUCCEEDED Scan that feeds the same risk history as
-- scans Vigil ran; this says which source it was uploaded into.
CREATE TABLE imported_scans (
  scan_id   TEXT PRIMARY KEY REFERENCES scans (id) ON DELETE CASCADE,
  source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX imported_scans_by_source ON imported_scans (source_id);

-- What an uploaded port-scanner file says about a host: its best OS match and its name.
ALTER TABLE targets ADD COLUMN os TEXT;
ALTER TABLE targets ADD COLUMN hostname TEXT;
`,
};
