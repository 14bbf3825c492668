import type { Migration } from './index.js';

export const m0013PendingImports: Migration = {
  version: 13,
  name: 'imports being recorded',
  sql: `
-- An upload is recorded in several short transactions so that it never holds
-- the event loop for long (issue 16). Its row here lives from before its
-- first write to its last; a row found at start-up is an import a crash cut
-- short, which is rolled back then. No foreign key: the row comes first.
CREATE TABLE pending_imports (
  scan_id    TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  started_at TEXT NOT NULL
) STRICT;
`,
};
