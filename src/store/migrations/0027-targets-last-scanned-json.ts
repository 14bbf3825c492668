import type { Migration } from './index.js';

/** Each target's list JSON, the expression of targets_list_json (0017) character for character; frozen with this migration. */
const LIST_JSON = `('{"id":' || json_quote(id) || ',"target":' || json_quote(target) || ',"label":' || json_quote(label)
  || ',"tags":' || tags || ',"health_score":{"score":' || health_score || ',"grade":' || json_quote(health_grade) || '}'
  || iif(auth_selenium_file IS NULL, '', ',"auth_selenium_file":' || json_quote(auth_selenium_file))
  || iif(openapi_file IS NULL, '', ',"openapi_file":' || json_quote(openapi_file))
  || ',"scanner_settings":{"zap":' || zap_settings || '},"origin":' || json_quote(origin)
  || ',"created_at":' || json_quote(created_at) || ',"last_scanned_at":' || json_quote(last_scanned_at)
  || iif(os IS NULL, '', ',"os":' || json_quote(os)) || iif(hostname IS NULL, '', ',"hostname":' || json_quote(hostname)) || '}')`;

export const m0027TargetsLastScannedJson: Migration = {
  version: 27,
  name: 'targets sorted by last scan, newest first, read from an index with their JSON',
  sql: `
-- GET /v1/targets?sort=last_scanned desc (the dashboard's "recently scanned"):
-- last scan then seq, both newest first, is this index walked backwards, and
-- each row's JSON is read from it (0024 walked targets_by_last_scanned_seq
-- and computed every row's JSON: 54-71 ms a page of 500 at 10,000 targets).
-- It holds that index's keys, so it replaces it.
CREATE INDEX targets_by_last_scanned_desc_json ON targets (account_id, COALESCE(last_scanned_at, ''), seq, ${LIST_JSON});
DROP INDEX targets_by_last_scanned_seq;
`,
};
