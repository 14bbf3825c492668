import type { Migration } from './index.js';

export const m0017TargetListJsonIndex: Migration = {
  version: 17,
  name: 'the list JSON of each target kept in an index',
  sql: `
-- GET /v1/targets renders each row's JSON in SQL (TARGET_JSON_SQL in
-- src/store/targets-repository.ts); that rendering (json_quote of a dozen
-- columns per row) was over half of SQLite's time for a page of 500. An index
-- on the same expression stores each target's JSON beside its keys, and
-- SQLite reads indexed expressions instead of computing them (3.41+), so a
-- page in the default order (created_at, either way) is read from this index
-- alone: 0.26-0.40 ms a page instead of 0.66-0.82 (100,000 targets). SQLite
-- keeps it current on every write (about 600 bytes more per target on disk,
-- more for targets with large scanner settings); the results never depend on
-- it: with another sort, or if TARGET_JSON_SQL changes without a migration
-- replacing this index, the JSON is computed per row as before
-- (test/http/presenters.test.ts checks that the list query uses it).
CREATE INDEX targets_list_json ON targets (account_id, seq, ('{"id":' || json_quote(id) || ',"target":' || json_quote(target) || ',"label":' || json_quote(label)
  || ',"tags":' || tags || ',"health_score":{"score":' || health_score || ',"grade":' || json_quote(health_grade) || '}'
  || iif(auth_selenium_file IS NULL, '', ',"auth_selenium_file":' || json_quote(auth_selenium_file))
  || iif(openapi_file IS NULL, '', ',"openapi_file":' || json_quote(openapi_file))
  || ',"scanner_settings":{"zap":' || zap_settings || '},"origin":' || json_quote(origin)
  || ',"created_at":' || json_quote(created_at) || ',"last_scanned_at":' || json_quote(last_scanned_at)
  || iif(os IS NULL, '', ',"os":' || json_quote(os)) || iif(hostname IS NULL, '', ',"hostname":' || json_quote(hostname)) || '}'));
`,
};
