import type { Migration } from './index.js';

export const m0019WebhookFirstAttemptDeliveries: Migration = {
  version: 19,
  name: 'a delivery done at its first attempt is recorded by its attempt alone',
  sql: `
-- A delivery that succeeds at its first attempt writes no webhook_deliveries
-- row: its 2xx attempt, marked first_delivered = 1, says it was delivered.
-- The partial index finds those attempts per (endpoint, event): the
-- dispatcher does not take such a delivery again, the cursor writes no
-- PENDING row for it, and the delivery log counts them as delivered
-- (src/store/webhook-deliveries-repository.ts, bench/webhooks.ts).
ALTER TABLE webhook_attempts ADD COLUMN first_delivered INTEGER;
CREATE INDEX webhook_attempts_first_delivered ON webhook_attempts (endpoint_id, event_id) WHERE first_delivered = 1;
-- Every delivery with a state, as webhook_deliveries held them before: its
-- row, or, for one done at its first attempt, what its row would have said
-- (DELIVERED, 1 attempt, next_attempt_at its attempt's time). For reading
-- (tests, an operator's queries); the service reads the tables.
CREATE VIEW webhook_delivery_states AS
  SELECT event_id, endpoint_id, state, attempts, next_attempt_at FROM webhook_deliveries
  UNION ALL
  SELECT event_id, endpoint_id, 'DELIVERED', 1, attempted_at FROM webhook_attempts WHERE first_delivered = 1;
`,
};
