import type { Migration } from './index.js';

export const m0038UnusedLastScannedIndex: Migration = {
  version: 38,
  name: 'the last-scanned index of 0001 goes: the list sorts by its COALESCE indexes',
  sql: `
-- targets_by_last_scanned (0001) keys last_scanned_at as it is. Since 0024
-- the list sorts by COALESCE(last_scanned_at, ''), which only an index on
-- that same expression serves (targets_by_last_scanned_seq and, from 0036,
-- targets_by_last_scanned_seq_desc), and no filter names the column: no
-- query reads this index (test/store/list-filter-plans.test.ts), but every
-- recording's refresh of a target moved its entry (bench/ingest.ts,
-- ingest-wal: about 240 of an upload's 35,000 write-ahead log frames).
DROP INDEX targets_by_last_scanned;
`,
};
