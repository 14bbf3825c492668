/**
 * A (target, scan type) pair's coverage, read to recompute its risks when a
 * scan is deleted: which scans covered the pair, when, and which of the
 * pair's risks each detected. Read from the pair's risks to their
 * detections, never from a covering scan to all of its detections (a scan of
 * 40,020 risks made each of its 400 pairs read 40,020 rows: deleting a scan
 * took 95 s in bench/scale.ts).
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { planOf } from '../support/query-plan.js';
import { insertRisks, insertScans } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

describe("store: a pair's coverage for a recompute", () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    insertRisks(db, 4);
    insertScans(db, ['s1', 's2', 's3']);
    db.exec(`INSERT INTO targets (id, account_id, target, zap_settings, origin, created_at) VALUES ('t2', 'a1', 'other.example.com', '{}', 'MANUAL', '2026-01-01');
      INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at, title, threat_level, definition, created_at)
        VALUES ('o1', 'a1', 't2', 'NMAP', 'f1', 'OPEN', '2026-01-01', '2026-01-01', 't', 'HIGH', '{}', '2026-01-01');
      INSERT INTO scan_coverage (scan_id, target_id, scan_type, covered_at) VALUES ('s1', 't1', 'NMAP', '2026-01-02'), ('s2', 't1', 'NMAP', '2026-01-03'),
        ('s1', 't2', 'NMAP', '2026-01-02'), ('s3', 't2', 'NMAP', '2026-01-04');
      INSERT INTO detections (scan_id, risk_id) VALUES ('s1', 'r1'), ('s1', 'r2'), ('s2', 'r2'), ('s2', 'r3'), ('s1', 'o1'), ('s3', 'o1');`);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it("lists each covering scan in order with the fingerprints it detected on the pair, and nothing of other targets'", () => {
    const coverage = new SqliteRiskRepository(db).coverageOf('t1', 'NMAP');
    expect(coverage.map(({ scanId, coveredAt, fingerprints }) => [scanId, coveredAt, [...fingerprints].sort()])).to.deep.equal([
      ['s1', '2026-01-02', ['f1', 'f2']],
      ['s2', '2026-01-03', ['f2', 'f3']],
    ]);
  });

  it("ignores the detections of a scan that no longer covers the pair (a deleted scan's, not yet swept)", () => {
    db.exec(`DELETE FROM scan_coverage WHERE scan_id = 's2'`);
    expect(new SqliteRiskRepository(db).coverageOf('t1', 'NMAP').map((entry) => entry.scanId)).to.deep.equal(['s1']);
  });

  it("reads the detections through the pair's risks, not through each covering scan", () => {
    const plan = planOf(
      db,
      () => new SqliteRiskRepository(db).coverageOf('t1', 'NMAP'),
      (sql) => sql.includes('detections'),
    );
    expect(plan, plan).to.match(/SEARCH r USING INDEX risks_by_target_seq \(target_id=\?\)/);
    expect(plan, plan).to.match(/SEARCH d USING (COVERING )?INDEX detections_by_risk/);
  });
});
