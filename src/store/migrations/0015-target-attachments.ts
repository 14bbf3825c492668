import type { Migration } from './index.js';

export const m0015TargetAttachments: Migration = {
  version: 15,
  name: 'login recordings and API definitions attached to targets',
  sql: `
-- The file a target's API definition was uploaded as (its login recording's
-- name already has a column, auth_selenium_file); absent when none.
ALTER TABLE targets ADD COLUMN openapi_file TEXT;

-- The attached files themselves, at most 1 MiB each (checked at upload), one
-- of each kind per target. They leave with their target.
CREATE TABLE target_attachments (
  target_seq  INTEGER NOT NULL REFERENCES targets (seq) ON DELETE CASCADE,
  account_id  TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('selenium', 'openapi')),
  file_name   TEXT NOT NULL,
  content     BLOB NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (target_seq, kind)
) WITHOUT ROWID;
`,
};
