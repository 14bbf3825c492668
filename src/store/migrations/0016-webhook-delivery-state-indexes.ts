import type { Migration } from './index.js';

export const m0016WebhookDeliveryStateIndexes: Migration = {
  version: 16,
  name: 'webhook delivery indexes that an outcome does not move',
  sql: `
-- webhook_deliveries_by_endpoint (endpoint_id, state) had every outcome move
-- its delivery's entry (a delete and an insert) besides leaving the pending
-- index. An index of the endpoint alone never moves: it serves the cascade
-- when an endpoint is deleted and the count of all of an endpoint's
-- deliveries; failed ones, few and final, get their own partial index, and
-- pending ones are counted in webhook_deliveries_pending_by_endpoint
-- (bench/webhooks.ts).
CREATE INDEX webhook_deliveries_of_endpoint ON webhook_deliveries (endpoint_id);
CREATE INDEX webhook_deliveries_failed_by_endpoint ON webhook_deliveries (endpoint_id) WHERE state = 'FAILED';
DROP INDEX webhook_deliveries_by_endpoint;
`,
};
