/**
 * Raw rows for store and migration tests, written with SQL so that they fit
 * any schema since migration 0004: account a1, its target t1, NMAP risks
 * r1..rN on it, and SUCCEEDED NMAP scans (seq 1, 2... in the order given).
 */
import type { Database } from '../../src/store/database.js';

export function insertRisks(db: Database, risks: number): void {
  db.exec(`INSERT INTO accounts (id, name, plan, namespace, created_at) VALUES ('a1', 'acme', 'free', 'acme', '2026-01-01T00:00:00Z');
    INSERT INTO targets (id, account_id, target, zap_settings, origin, created_at) VALUES ('t1', 'a1', 'host.example.com', '{}', 'MANUAL', '2026-01-01T00:00:00Z');`);
  const risk =
    db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at, title, threat_level, definition, created_at)
    VALUES (?, 'a1', 't1', 'NMAP', ?, 'OPEN', '2026-01-01', '2026-01-01', 't', 'HIGH', '{}', '2026-01-01')`);
  for (let n = 1; n <= risks; n++) risk.run(`r${n}`, `f${n}`);
}

export function insertScans(db: Database, ids: readonly string[]): void {
  const scan = db.prepare(
    `INSERT INTO scans (id, account_id, name, type, state, requested_targets, created_at) VALUES (?, 'a1', ?, 'NMAP', 'SUCCEEDED', '[]', '2026-01-05')`,
  );
  for (const id of ids) scan.run(id, id);
}
