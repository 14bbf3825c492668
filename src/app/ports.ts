/**
 * The interfaces the middle ring depends on, one file per area in
 * src/app/ports/ (moved from this file, which re-exports them so that no
 * importer changes). Adapters (the SQLite store, the Kubernetes client, the
 * embedded runner) implement them; only the composition root knows which.
 */
export * from './ports/accounts.js';
export * from './ports/lists.js';
export * from './ports/targets.js';
export * from './ports/scans.js';
export * from './ports/workloads.js';
export * from './ports/risks.js';
export * from './ports/webhooks.js';
export * from './ports/dashboard.js';
export * from './ports/sources.js';
export * from './ports/schedules.js';
export * from './ports/mail.js';
export * from './ports/reports.js';
export * from './ports/scan-pdfs.js';
export * from './ports/dashboard-reads.js';
export * from './ports/health.js';
export type { ScanType } from '../domain/risks/finding.js';
export * from './ports/backups.js';
