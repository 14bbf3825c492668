import type { Migration } from './index.js';

export const m0007WebhookCursor: Migration = {
  version: 7,
  name: 'webhook fan-out cursor',
  sql: `
-- The last outbox event already fanned out to endpoints; a restart resumes after it.
CREATE TABLE webhook_cursor (
  id        INTEGER PRIMARY KEY CHECK (id = 1),
  event_seq INTEGER NOT NULL
) STRICT;
INSERT INTO webhook_cursor (id, event_seq) VALUES (1, 0);
`,
};
