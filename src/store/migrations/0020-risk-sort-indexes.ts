import type { Migration } from './index.js';

export const m0020RiskSortIndexes: Migration = {
  version: 20,
  name: 'risk indexes for GET /v1/risks sort',
  sql: `
-- GET /v1/risks?sort=<field> <asc|desc> reads each order by walking one index
-- of the account's risks (then seq, the tiebreaker), either way, so a page
-- costs the same whatever the account holds; without them SQLite sorted every
-- risk of the account in a temporary B-tree for each page. sort=target needs
-- none: it walks the targets by address and each target's risks by seq
-- (risks_by_account_target).
-- The severity expression is THREAT_RANK in src/store/risks-repository.ts,
-- character for character: SQLite uses an expression index only for the same expression.
CREATE INDEX risks_by_account_threat ON risks (account_id, (CASE threat_level WHEN 'CRITICAL' THEN 4 WHEN 'HIGH' THEN 3 WHEN 'MEDIUM' THEN 2 WHEN 'LOW' THEN 1 ELSE 0 END), seq);
CREATE INDEX risks_by_account_first_detected ON risks (account_id, first_detected_at, seq);
CREATE INDEX risks_by_account_last_detected ON risks (account_id, last_detected_at, seq);
`,
};
