import type { Migration } from './index.js';

export const m0003UploadTokens: Migration = {
  version: 3,
  name: 'per-scan upload tokens',
  sql: `
-- A scanner pod uploads its result files with a token only its Scan's upload
-- accepts (DESIGN.md decision 1). Stored as a SHA-256 hash, like API keys.
CREATE TABLE scan_upload_tokens (
  scan_id    TEXT PRIMARY KEY REFERENCES scans (id) ON DELETE CASCADE,
  hash       BLOB NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
`,
};
