import type { Migration } from './index.js';

export const m0018ScanResultContent: Migration = {
  version: 18,
  name: 'small scanner outputs kept in their result row',
  sql: `
-- A scanner output of up to 1 MiB (RESULT_IN_ROW_MAX_BYTES) is stored in its
-- result row, in the transaction that records the scan SUCCEEDED: one durable
-- commit instead of a file's fsync and rename followed by the commit's
-- (bench/scans.ts). NULL: the file is on disk under results/<scan id>/.
ALTER TABLE scan_results ADD COLUMN content BLOB;
`,
};
