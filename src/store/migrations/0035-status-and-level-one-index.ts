import type { Migration } from './index.js';

export const m0035StatusAndLevelOneIndex: Migration = {
  version: 35,
  name: 'the status and threat level filters read the severity index and one (status, severity) index',
  sql: `
-- Each index of risks is written with every new risk: of the five that 0024
-- added for the filters, three served status and threat level. The threat
-- level filter now reads risks_by_account_threat (0020), whose severity
-- expression numbers the five levels one to one; status, alone or with a
-- threat level, reads this index, one range per status and severity merged
-- newest first (SqliteRiskRepository.list). Two indexes fewer for every risk
-- an upload writes (bench/ingest.ts: 3,190 of its WAL pages). The severity
-- expression is risks_by_account_threat's and THREAT_RANK's, character for
-- character.
DROP INDEX risks_by_account_status;
DROP INDEX risks_by_account_level;
DROP INDEX risks_by_account_status_level;
CREATE INDEX risks_by_account_status_threat ON risks
  (account_id, status, (CASE threat_level WHEN 'CRITICAL' THEN 4 WHEN 'HIGH' THEN 3 WHEN 'MEDIUM' THEN 2 WHEN 'LOW' THEN 1 ELSE 0 END), seq);
`,
};
