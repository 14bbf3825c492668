import type { Migration } from './index.js';

export const m0001AccountsAndTargets: Migration = {
  version: 1,
  name: 'accounts, api keys, targets',
  sql: `
CREATE TABLE service_secrets (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
) STRICT;

CREATE TABLE accounts (
  id                 TEXT PRIMARY KEY,
  name               TEXT NOT NULL UNIQUE,
  plan               TEXT NOT NULL CHECK (plan IN ('free', 'paid')),
  features           TEXT NOT NULL DEFAULT '[]',
  monthly_scan_limit INTEGER CHECK (monthly_scan_limit IS NULL OR monthly_scan_limit >= 0),
  min_openvas_qod    INTEGER NOT NULL DEFAULT 70 CHECK (min_openvas_qod BETWEEN 0 AND 100),
  namespace          TEXT NOT NULL UNIQUE,
  created_at         TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name       TEXT NOT NULL DEFAULT '',
  lookup     TEXT NOT NULL,
  hash       BLOB NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;
CREATE INDEX api_keys_by_lookup ON api_keys (lookup);
CREATE INDEX api_keys_by_account ON api_keys (account_id);

-- seq gives every list its newest-first order and keyset pagination a
-- stable, unique tiebreaker; id is the public identifier.
CREATE TABLE targets (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  account_id         TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  target             TEXT NOT NULL,
  label              TEXT NOT NULL DEFAULT '',
  tags               TEXT NOT NULL DEFAULT '[]',
  zap_settings       TEXT NOT NULL,
  origin             TEXT NOT NULL CHECK (origin IN ('MANUAL', 'INTERNAL_SCANNER', 'CLOUD_PROVIDER', 'CODE_INTEGRATION', 'UPLOADED_RESULTS')),
  health_score       INTEGER NOT NULL DEFAULT 100,
  health_grade       TEXT NOT NULL DEFAULT 'A',
  auth_selenium_file TEXT,
  created_at         TEXT NOT NULL,
  last_scanned_at    TEXT,
  UNIQUE (account_id, target)
) STRICT;
CREATE INDEX targets_by_account ON targets (account_id, seq);
CREATE INDEX targets_by_label ON targets (account_id, label, seq);
CREATE INDEX targets_by_last_scanned ON targets (account_id, last_scanned_at, seq);

-- Tags are also kept as JSON on the target for reading; this table makes
-- filtering by tag an index lookup.
CREATE TABLE target_tags (
  account_id TEXT NOT NULL,
  tag        TEXT NOT NULL,
  target_seq INTEGER NOT NULL REFERENCES targets (seq) ON DELETE CASCADE,
  PRIMARY KEY (account_id, tag, target_seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX target_tags_by_target ON target_tags (target_seq);
`,
};
