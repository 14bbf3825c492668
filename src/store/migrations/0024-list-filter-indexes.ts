import type { Migration } from './index.js';

/**
 * Each target's list JSON: the expression of targets_list_json (0017), copied
 * character for character (SQLite reads an indexed expression only where it
 * is the same one). Frozen with this migration, as 0017's copy is.
 */
const LIST_JSON = `('{"id":' || json_quote(id) || ',"target":' || json_quote(target) || ',"label":' || json_quote(label)
  || ',"tags":' || tags || ',"health_score":{"score":' || health_score || ',"grade":' || json_quote(health_grade) || '}'
  || iif(auth_selenium_file IS NULL, '', ',"auth_selenium_file":' || json_quote(auth_selenium_file))
  || iif(openapi_file IS NULL, '', ',"openapi_file":' || json_quote(openapi_file))
  || ',"scanner_settings":{"zap":' || zap_settings || '},"origin":' || json_quote(origin)
  || ',"created_at":' || json_quote(created_at) || ',"last_scanned_at":' || json_quote(last_scanned_at)
  || iif(os IS NULL, '', ',"os":' || json_quote(os)) || iif(hostname IS NULL, '', ',"hostname":' || json_quote(hostname)) || '}')`;

export const m0024ListFilterIndexes: Migration = {
  version: 24,
  name: 'indexes for filtered risk and scan lists and sorted target lists',
  sql: `
-- GET /v1/risks filtered by one value of a field, newest first: the account's
-- rows with that value in seq order, one index range walked backwards that
-- stops at the page. Without them SQLite walked risks_by_account over every
-- risk of the account and read each row to test the field (a million risks:
-- threat_level HIGH 0.85 s to 9 ms, status CLOSED 0.73 s to 1 ms). target_id
-- is served by risks_by_account_target (0014), tags by resolving the tag's
-- targets first (src/store/risks-repository.ts).
CREATE INDEX risks_by_account_status ON risks (account_id, status, seq);
CREATE INDEX risks_by_account_level ON risks (account_id, threat_level, seq);
CREATE INDEX risks_by_account_scan_type ON risks (account_id, scan_type, seq);
CREATE INDEX risks_by_account_title ON risks (account_id, title, seq);
-- status with threat_level, the dashboard's usual pair (open HIGH risks).
CREATE INDEX risks_by_account_status_level ON risks (account_id, status, threat_level, seq);

-- GET /v1/scans filtered by state, type or schedule, newest first.
CREATE INDEX scans_by_account_state ON scans (account_id, state, seq);
CREATE INDEX scans_by_account_type ON scans (account_id, type, seq);
CREATE INDEX scans_by_account_schedule ON scans (account_id, scheduled_by, seq);

-- GET /v1/targets?sort=label|target|last_scanned: the sort field, then seq
-- newest first whatever the field's direction (the list's tiebreaker). For
-- asc, these indexes hold seq DESC and are walked forwards; targets_by_label
-- (0001) held seq ascending, so label asc sorted every target of the account.
-- They also hold the list JSON (the expression of targets_list_json, 0017,
-- character for character), so an asc page is read from the index alone, as
-- the default order is. desc walks targets_by_label, the unique (account,
-- target) key and targets_by_last_scanned_seq backwards, computing each row's
-- JSON: a second JSON copy per field was not worth its disk and write cost.
CREATE INDEX targets_by_last_scanned_seq ON targets (account_id, COALESCE(last_scanned_at, ''), seq);
CREATE INDEX targets_by_label_json ON targets (account_id, label, seq DESC, ${LIST_JSON});
CREATE INDEX targets_by_address_json ON targets (account_id, target, seq DESC, ${LIST_JSON});
CREATE INDEX targets_by_last_scanned_json ON targets (account_id, COALESCE(last_scanned_at, ''), seq DESC, ${LIST_JSON});
`,
};
