import type { Migration } from './index.js';

export const m0011WebhookDueByEndpoint: Migration = {
  version: 11,
  name: 'pending webhook deliveries by endpoint and due time',
  sql: `
-- The dispatcher claims each endpoint's due deliveries oldest first, in small
-- batches, and finds the endpoints that have any pending (one index probe per
-- endpoint), so that a long queue of one endpoint is never scanned to reach
-- another's. Partial: delivered and failed rows are most of the table and
-- are never looked up this way.
CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'PENDING';

-- Served the dispatcher's one query over all endpoints, which this index
-- replaces; every claim and every attempt recorded had to move its entries.
DROP INDEX webhook_deliveries_due;
`,
};
