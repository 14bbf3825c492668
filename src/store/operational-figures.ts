/**
 * Figures /metrics reads from the record at each scrape, across accounts:
 * scans by state and type, and webhook deliveries waiting for a retry. Both
 * are index walks over small sets (scans, not risks; PENDING rows only).
 */
import type { Database } from './database.js';

export interface ScanCount {
  state: string;
  type: string;
  count: number;
}

export function scanCountsByStateAndType(db: Database): ScanCount[] {
  return db.prepare('SELECT state, type, COUNT(*) AS count FROM scans GROUP BY state, type ORDER BY state, type').all() as ScanCount[];
}

export function pendingWebhookDeliveries(db: Database): number {
  return (db.prepare("SELECT COUNT(*) AS count FROM webhook_deliveries WHERE state = 'PENDING'").get() as { count: number }).count;
}
