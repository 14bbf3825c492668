/**
 * Migrations 0025 and 0026 on a database that already holds scans and risks:
 * each scan's inline risk lists become rows of scan_risks in their order (and
 * the column goes), and the dashboard's counters start equal to a count of
 * the rows.
 */
import { expect } from 'chai';
import { applyMigrations, openDatabase } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';
import { SqliteDashboardReadRepository } from '../../src/store/dashboard-read-repository.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: migrations 0025 and 0026 back-fill the risk lists and the counters', () => {
  it("moves each scan's inline lists into scan_risks in order and counts open risks and daily changes from the rows there were", () => {
    const dir = tempDir();
    const db = openDatabase(
      dir.path,
      MIGRATIONS.filter((migration) => migration.version <= 24),
    );
    try {
      db.exec(`INSERT INTO accounts (id, name, plan, namespace, created_at) VALUES ('a1', 'acme', 'free', 'acme', '2026-01-01T00:00:00Z');
        INSERT INTO targets (id, account_id, target, zap_settings, origin, created_at) VALUES ('t1', 'a1', 'host.example.com', '{}', 'MANUAL', '2026-01-01T00:00:00Z');`);
      const risk =
        db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at, is_accepted, title, threat_level, qod, definition, created_at)
        VALUES (?, 'a1', 't1', ?, ?, ?, '2026-01-01', '2026-01-01', ?, 't', ?, ?, '{}', '2026-01-01')`);
      risk.run('r1', 'NMAP', 'f1', 'OPEN', 0, 'HIGH', null);
      risk.run('r2', 'NMAP', 'f2', 'OPEN', 0, 'HIGH', null);
      risk.run('r3', 'NMAP', 'f3', 'CLOSED', 0, 'HIGH', null);
      risk.run('r4', 'NMAP', 'f4', 'OPEN', 1, 'LOW', null);
      risk.run('r5', 'OPENVAS', 'f5', 'OPEN', 0, 'MEDIUM', 40);
      const scan = db.prepare(`INSERT INTO scans (id, account_id, name, type, state, requested_targets, risks, created_at, finished_at)
        VALUES (?, 'a1', ?, 'NMAP', ?, '[]', ?, ?, ?)`);
      scan.run(
        's1',
        's1',
        'SUCCEEDED',
        JSON.stringify({ newOpen: ['r2', 'r1', 'r3'], stillOpen: [], closed: [] }),
        '2026-01-05T10:00:00Z',
        '2026-01-05T10:10:00Z',
      );
      scan.run('s2', 's2', 'SUCCEEDED', JSON.stringify({ newOpen: ['r4'], stillOpen: ['r1'], closed: ['r3'] }), '2026-01-05T11:00:00Z', '2026-01-06T00:10:00Z');
      scan.run('s3', 's3', 'FAILED', JSON.stringify({ newOpen: ['r5'], stillOpen: [], closed: [] }), '2026-01-06T11:00:00Z', null);

      applyMigrations(db, MIGRATIONS);

      const scans = new SqliteScanRepository(db);
      expect(scans.findById('a1', 's1')!.risks).to.deep.equal({ newOpen: ['r2', 'r1', 'r3'], stillOpen: [], closed: [] });
      expect(scans.findById('a1', 's2')!.risks).to.deep.equal({ newOpen: ['r4'], stillOpen: ['r1'], closed: ['r3'] });
      const columns = (db.prepare("SELECT name FROM pragma_table_info('scans')").all() as Array<{ name: string }>).map((column) => column.name);
      expect(columns).not.to.include('risks');
      const read = new SqliteDashboardReadRepository(db);
      expect(read.openRisksByLevel('a1', 70)).to.deep.equal({ HIGH: 2 });
      expect(read.openRisksByLevel('a1', 40)).to.deep.equal({ HIGH: 2, MEDIUM: 1 });
      expect(read.dailyRiskChanges('a1', '2026-01-01T00:00:00.000Z')).to.deep.equal([
        { day: '2026-01-05', opened: 3, closed: 0 },
        { day: '2026-01-06', opened: 1, closed: 1 },
      ]);
    } finally {
      db.close();
      dir.remove();
    }
  });
});
