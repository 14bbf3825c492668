import type { Migration } from './index.js';

export const m0037RisksByTargetOneIndex: Migration = {
  version: 37,
  name: "a target's risks are read by one index, (target_id, seq)",
  sql: `
-- Two indexes led by a target's risks: risks_by_target (target_id,
-- scan_type, status) of 0004, for a target's history and the foreign key's
-- cascade, and risks_by_account_target (account_id, target_id, seq) of
-- 0024, for lists and reports narrowed to targets. Every risk an upload
-- inserts wrote both (bench/ingest.ts: 3,027 and 3,731 of its write-ahead
-- log's pages). One index serves both: a target belongs to one account, so
-- the account is tested on the rows read (which lists read anyway) once the
-- target ids asked for are known to be the account's; the history's scan
-- type too (a target has risks of a few scan types), and the index's seq
-- order is the order the history reads them in (no sort). The uploads of
-- bench/ingest.ts: 0.1-0.17 CPU s less of 2.8-3.1.
DROP INDEX risks_by_target;
DROP INDEX risks_by_account_target;
CREATE INDEX risks_by_target_seq ON risks (target_id, seq);
`,
};
