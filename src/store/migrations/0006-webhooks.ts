import type { Migration } from './index.js';

export const m0006Webhooks: Migration = {
  version: 6,
  name: 'webhook endpoints and deliveries',
  sql: `
-- The signing secret is kept as is: every delivery is signed with it and
-- the dashboard shows it to its account.
CREATE TABLE webhook_endpoints (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url        TEXT NOT NULL,
  secret     TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, seq);

-- One row per (event, endpoint): the delivery state survives restarts.
CREATE TABLE webhook_deliveries (
  event_id        TEXT NOT NULL,
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  state           TEXT NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  PRIMARY KEY (event_id, endpoint_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);

CREATE TABLE webhook_attempts (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id    TEXT NOT NULL,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  attempted_at TEXT NOT NULL,
  status      INTEGER,
  error       TEXT,
  duration_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, seq);
`,
};
