import type { Migration } from './index.js';

export const m0036TargetSortKeysWithoutJson: Migration = {
  version: 36,
  name: 'targets sorted by label, address or last scan walk indexes of their keys alone',
  sql: `
-- 0024 and 0027 gave each sorted target list an index holding the sort key,
-- seq and the target's whole list JSON, so that a page was read from the
-- index alone. Every write of a target rebuilt that JSON four times over and
-- wrote it into four indexes (an upload records and then refreshes each of
-- its targets: bench/ingest.ts, 620 targets, 2,588 of its WAL pages and about
-- 0.15 CPU s). A page computes its rows' JSON from the table instead, as the
-- descending label and address orders always did: 500 rows of 10,000
-- targets in 3-8 ms (bench/scale.ts). Each order keeps an index walked to
-- the page: the sort key, then seq newest first whatever the key's
-- direction (ascending: these, walked forwards; descending: targets_by_label
-- of 0001 and targets_by_last_scanned_seq again, walked backwards). The
-- address is unique in its account, so its key of 0001 serves both
-- directions. The list's default order keeps targets_list_json (0017).
DROP INDEX targets_by_label_json;
DROP INDEX targets_by_address_json;
DROP INDEX targets_by_last_scanned_json;
DROP INDEX targets_by_last_scanned_desc_json;
CREATE INDEX targets_by_label_seq_desc ON targets (account_id, label, seq DESC);
CREATE INDEX targets_by_last_scanned_seq_desc ON targets (account_id, COALESCE(last_scanned_at, ''), seq DESC);
CREATE INDEX targets_by_last_scanned_seq ON targets (account_id, COALESCE(last_scanned_at, ''), seq);
`,
};
