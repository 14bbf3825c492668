import type { Migration } from './index.js';

/** Whether a risk row counts as open on the overview: open and not accepted (the OpenVAS quality gate is applied when reading). */
const COUNTED = (row: 'NEW' | 'OLD') => `${row}.status = 'OPEN' AND ${row}.is_accepted = 0`;
/** The counter key of a risk row: OpenVAS findings with a quality of detection are gated by the account's minimum, which may change. */
const KEY = (row: 'NEW' | 'OLD') =>
  `${row}.account_id, ${row}.threat_level, iif(${row}.scan_type = 'OPENVAS' AND ${row}.qod IS NOT NULL, 1, 0), iif(${row}.scan_type = 'OPENVAS' AND ${row}.qod IS NOT NULL, ${row}.qod, 0)`;
const ADD_OPEN = (
  row: 'NEW' | 'OLD',
  delta: '+1' | '-1',
) => `INSERT INTO open_risk_counts (account_id, threat_level, gated, qod, n) SELECT ${KEY(row)}, ${delta} WHERE ${COUNTED(row)}
    ON CONFLICT (account_id, threat_level, gated, qod) DO UPDATE SET n = n + excluded.n;`;

const DAY = (row: 'NEW' | 'OLD') => `substr(COALESCE(${row}.finished_at, ${row}.created_at), 1, 10)`;
const ADD_DAY = (row: 'NEW' | 'OLD', sign: '' | '-') => `INSERT INTO risk_changes_by_day (account_id, day, opened, closed)
    SELECT ${row}.account_id, ${DAY(row)}, ${sign}${row}.new_open_count, ${sign}${row}.closed_count WHERE ${row}.state = 'SUCCEEDED'
    ON CONFLICT (account_id, day) DO UPDATE SET opened = opened + excluded.opened, closed = closed + excluded.closed;`;

export const m0026DashboardCounters: Migration = {
  version: 26,
  name: "the dashboard overview's figures kept as counters",
  sql: `
-- The overview's open risks by threat level, kept current by triggers in the
-- transaction of every change to a risk (recordings, re-scans, acceptance,
-- deletions, cascades from a target or account): the overview reads a few
-- counter rows instead of counting every open risk of the account (a million
-- risks: 0.54 s). gated = 1: an OpenVAS risk with a quality of detection,
-- counted only at or above the account's minimum, read as qod >= ?.
CREATE TABLE open_risk_counts (
  account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  threat_level TEXT NOT NULL,
  gated        INTEGER NOT NULL,
  qod          INTEGER NOT NULL,
  n            INTEGER NOT NULL,
  PRIMARY KEY (account_id, threat_level, gated, qod)
) STRICT, WITHOUT ROWID;
INSERT INTO open_risk_counts (account_id, threat_level, gated, qod, n)
  SELECT account_id, threat_level, iif(scan_type = 'OPENVAS' AND qod IS NOT NULL, 1, 0) AS g, iif(scan_type = 'OPENVAS' AND qod IS NOT NULL, qod, 0) AS q, COUNT(*)
  FROM risks WHERE status = 'OPEN' AND is_accepted = 0 GROUP BY account_id, threat_level, g, q;
CREATE TRIGGER risks_count_insert AFTER INSERT ON risks BEGIN
  ${ADD_OPEN('NEW', '+1')}
END;
CREATE TRIGGER risks_count_update AFTER UPDATE OF status, is_accepted, threat_level, scan_type, qod ON risks BEGIN
  ${ADD_OPEN('OLD', '-1')}
  ${ADD_OPEN('NEW', '+1')}
END;
CREATE TRIGGER risks_count_delete AFTER DELETE ON risks BEGIN
  ${ADD_OPEN('OLD', '-1')}
END;
-- The counters replace it (its one reader, the overview's count).
DROP INDEX risks_open_by_level;

-- Risks SUCCEEDED scans opened (new_open) and closed, by the UTC day the scan
-- finished, for the overview's weekly trend: it read json_array_length of
-- every recent scan's risk lists. Kept by triggers on scans: a scan counts
-- once it is SUCCEEDED, and no more once deleted.
CREATE TABLE risk_changes_by_day (
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  day        TEXT NOT NULL,
  opened     INTEGER NOT NULL,
  closed     INTEGER NOT NULL,
  PRIMARY KEY (account_id, day)
) STRICT, WITHOUT ROWID;
INSERT INTO risk_changes_by_day (account_id, day, opened, closed)
  SELECT account_id, substr(COALESCE(finished_at, created_at), 1, 10) AS d, SUM(new_open_count), SUM(closed_count)
  FROM scans WHERE state = 'SUCCEEDED' GROUP BY account_id, d;
CREATE TRIGGER scans_changes_insert AFTER INSERT ON scans BEGIN
  ${ADD_DAY('NEW', '')}
END;
CREATE TRIGGER scans_changes_update AFTER UPDATE OF state, created_at, finished_at, new_open_count, closed_count ON scans BEGIN
  ${ADD_DAY('OLD', '-')}
  ${ADD_DAY('NEW', '')}
END;
CREATE TRIGGER scans_changes_delete AFTER DELETE ON scans BEGIN
  ${ADD_DAY('OLD', '-')}
END;
`,
};
