import type { Migration } from './index.js';

export const m0009DashboardSessions: Migration = {
  version: 9,
  name: 'dashboard sessions and test events',
  sql: `
-- Dashboard sign-ins. Only a SHA-256 hash of the session token is kept, so a
-- copy of the database signs nobody in. A session belongs to the API key it
-- was opened with and ends when that key is revoked (the lookup joins it).
CREATE TABLE dashboard_sessions (
  token_hash BLOB PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  api_key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions (api_key_id);

-- A test event from the dashboard goes to one endpoint only; NULL (every
-- other event) means every endpoint its account had when it was recorded.
ALTER TABLE events ADD COLUMN endpoint_id TEXT;

-- The dashboard's delivery log counts pending and failed deliveries per endpoint.
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, state);
`,
};
