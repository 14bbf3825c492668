import type { Migration } from './index.js';

const CHANGED = ['status', 'is_accepted', 'threat_level', 'scan_type', 'qod'].map((column) => `OLD.${column} IS NOT NEW.${column}`).join(' OR ');
const ADD_OPEN = (row: 'NEW' | 'OLD', delta: '+1' | '-1') =>
  `INSERT INTO open_risk_counts (account_id, threat_level, gated, qod, n)
    SELECT ${row}.account_id, ${row}.threat_level, iif(${row}.scan_type = 'OPENVAS' AND ${row}.qod IS NOT NULL, 1, 0),
      iif(${row}.scan_type = 'OPENVAS' AND ${row}.qod IS NOT NULL, ${row}.qod, 0), ${delta}
    WHERE ${row}.status = 'OPEN' AND ${row}.is_accepted = 0
    ON CONFLICT (account_id, threat_level, gated, qod) DO UPDATE SET n = n + excluded.n;`;

export const m0030OpenCountsOnChange: Migration = {
  version: 30,
  name: 'open risk counters updated only when a counted column changes',
  sql: `
-- A re-scan writes every re-detected risk's columns, its status included,
-- and the counters' update trigger (0026) took one away and added it back for
-- each: two upserts per risk for nothing (a re-scan of 40,020 risks on an
-- account of a million, bench/scale.ts). It now runs only when a column the
-- counters depend on really changes.
DROP TRIGGER risks_count_update;
CREATE TRIGGER risks_count_update AFTER UPDATE OF status, is_accepted, threat_level, scan_type, qod ON risks
WHEN ${CHANGED} BEGIN
  ${ADD_OPEN('OLD', '-1')}
  ${ADD_OPEN('NEW', '+1')}
END;
`,
};
