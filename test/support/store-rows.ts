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
  countOpenRisks(db);
}

/**
 * The overview's open risk counters (migration 0026) made again from the risk
 * rows, as that migration first made them: rows written with SQL, as here and
 * in benchmark seeds, are not counted (since migration 0033 the statements of
 * the risk repository count the risks they insert). Nothing before 0026.
 */
export function countOpenRisks(db: Database): void {
  if (db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'open_risk_counts'").get() === undefined) return;
  db.exec(`DELETE FROM open_risk_counts;
    INSERT INTO open_risk_counts (account_id, threat_level, gated, qod, n) ${OPEN_RISK_RECOUNT};`);
}

/** The counter rows (account_id, threat_level, gated, qod, n) a count of the open, not accepted risk rows makes, as migration 0026 keys them. */
export const OPEN_RISK_RECOUNT = `SELECT account_id, threat_level, iif(scan_type = 'OPENVAS' AND qod IS NOT NULL, 1, 0) AS gated,
    iif(scan_type = 'OPENVAS' AND qod IS NOT NULL, qod, 0) AS qod, COUNT(*) AS n
  FROM risks WHERE status = 'OPEN' AND is_accepted = 0 GROUP BY account_id, threat_level, gated, 4`;

export function insertScans(db: Database, ids: readonly string[]): void {
  const scan = db.prepare(
    `INSERT INTO scans (id, account_id, name, type, state, requested_targets, created_at) VALUES (?, 'a1', ?, 'NMAP', 'SUCCEEDED', '[]', '2026-01-05')`,
  );
  for (const id of ids) scan.run(id, id);
}
