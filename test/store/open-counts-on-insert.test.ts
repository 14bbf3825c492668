/**
 * New risks counted by the statements that insert them (migration 0033):
 * no trigger on risks fires for an insert, so SQLite keeps no statement
 * journal for it, and the overview's counters still equal a count of the
 * rows after each kind of insert the risk repository makes.
 */
import { expect } from 'chai';
import type { ScanType, ThreatLevel } from '../../src/domain/risks/finding.js';
import type { Risk } from '../../src/domain/risks/risk.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { insertRisks, OPEN_RISK_RECOUNT } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: the open risk counters on a risk insert', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let risks: SqliteRiskRepository;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    insertRisks(db, 0);
    risks = new SqliteRiskRepository(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const COUNTER_ROWS = 'SELECT threat_level, gated, qod, n FROM open_risk_counts WHERE n <> 0 ORDER BY threat_level, gated, qod';
  const counters = () => db.prepare(COUNTER_ROWS).all();
  /** The counter rows made from the risk rows, as migration 0026 first made them. */
  const recount = () => db.prepare(`SELECT threat_level, gated, qod, n FROM (${OPEN_RISK_RECOUNT}) ORDER BY threat_level, gated, qod`).all();

  function risk(n: number, scanType: ScanType, level: ThreatLevel, change: Partial<Risk> = {}, qod?: number): Risk {
    return {
      id: `r${n}`,
      accountId: 'a1',
      targetId: 't1',
      scanType,
      fingerprint: `f${n}`,
      status: 'OPEN',
      firstDetectedAt: '2026-01-01',
      lastDetectedAt: '2026-01-01',
      isAccepted: false,
      acceptedBy: [],
      definition: {
        scan_type: scanType,
        title: `t${n}`,
        threat_level: level,
        description: '',
        solution: '',
        cvss: '',
        additional_info: qod === undefined ? {} : { qod },
      },
      createdAt: '2026-01-01',
      ...change,
    };
  }

  it('has no trigger on the insert of a risk, which would give every insert a statement journal', () => {
    const triggers = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'risks' AND sql LIKE '%AFTER INSERT%'").all();
    expect(triggers).to.deep.equal([]);
  });

  it('insert(): an open risk counts under its level, an OpenVAS one with a quality of detection under its gate; closed and accepted ones do not', () => {
    risks.insert(risk(1, 'NMAP', 'HIGH'));
    risks.insert(risk(2, 'NMAP', 'HIGH'));
    risks.insert(risk(3, 'NMAP', 'HIGH', { status: 'CLOSED' }));
    risks.insert(risk(4, 'NMAP', 'LOW', { isAccepted: true, acceptedBy: [{ note: 'fine', created_at: '2026-01-02', last_updated_at: '2026-01-02' }] }));
    risks.insert(risk(5, 'OPENVAS', 'MEDIUM', {}, 39.6));
    risks.insert(risk(6, 'OPENVAS', 'MEDIUM'));
    expect(counters()).to.deep.equal([
      { threat_level: 'HIGH', gated: 0, qod: 0, n: 2 },
      { threat_level: 'MEDIUM', gated: 0, qod: 0, n: 1 },
      { threat_level: 'MEDIUM', gated: 1, qod: 40, n: 1 },
    ]);
    expect(counters()).to.deep.equal(recount());
  });

  it("insertStaged(): a chunk's new risks counted by level and gate, as a count of the rows finds them, added to what was counted before", () => {
    risks.insert(risk(1, 'OPENVAS', 'HIGH'));
    const stage = db.prepare(
      `INSERT INTO temp.staged_findings (seq, scan_id, host, fingerprint, title, threat_level, qod, definition) VALUES (?, 's1', 'h', ?, ?, ?, ?, '{}')`,
    );
    const staged: Array<[ThreatLevel, number | null]> = [
      ['HIGH', null],
      ['HIGH', null],
      ['CRITICAL', 80],
      ['CRITICAL', 80],
      ['CRITICAL', 30],
      ['INFO', null],
    ];
    staged.forEach(([level, qod], index) => stage.run(index + 1, `staged-${index}`, `title ${index}`, level, qod));
    db.transaction(() =>
      risks.insertStaged(
        'a1',
        'OPENVAS',
        '2026-02-01',
        staged.map((_, index) => [index + 1, `n${index}`, 't1'] as const),
      ),
    )();
    expect(db.prepare("SELECT COUNT(*) FROM risks WHERE id LIKE 'n%' AND status = 'OPEN' AND definition = '{}'").pluck().get()).to.equal(6);
    expect(counters()).to.deep.equal([
      { threat_level: 'CRITICAL', gated: 1, qod: 30, n: 1 },
      { threat_level: 'CRITICAL', gated: 1, qod: 80, n: 2 },
      { threat_level: 'HIGH', gated: 0, qod: 0, n: 3 },
      { threat_level: 'INFO', gated: 0, qod: 0, n: 1 },
    ]);
    expect(counters()).to.deep.equal(recount());
  });

  it('insertStaged(): a chunk larger than one read of the staging (500 rows) goes in whole and in its order, every row counted', () => {
    const stage = db.prepare(
      `INSERT INTO temp.staged_findings (seq, scan_id, host, fingerprint, title, threat_level, qod, definition) VALUES (?, 's1', 'h', ?, 't', ?, NULL, ?)`,
    );
    const count = 1_203;
    for (let seq = 1; seq <= count; seq++) stage.run(seq, `f${seq}`, seq % 3 === 0 ? 'HIGH' : 'LOW', JSON.stringify({ n: seq }));
    // Given in reverse: the risks are written in the order given, not the staging's.
    const rows = Array.from({ length: count }, (_, index) => [count - index, `n${count - index}`, 't1'] as const);
    db.transaction(() => risks.insertStaged('a1', 'NMAP', '2026-02-01', rows))();
    const written = db.prepare('SELECT id, fingerprint, definition FROM risks ORDER BY seq').all() as Array<{
      id: string;
      fingerprint: string;
      definition: string;
    }>;
    expect(written.map((row) => row.id)).to.deep.equal(rows.map(([, id]) => id));
    expect(
      written.every((row) => row.definition === JSON.stringify({ n: Number(row.fingerprint.slice(1)) }) && row.id === `n${row.fingerprint.slice(1)}`),
    ).to.equal(true);
    expect(counters()).to.deep.equal([
      { threat_level: 'HIGH', gated: 0, qod: 0, n: 401 },
      { threat_level: 'LOW', gated: 0, qod: 0, n: 802 },
    ]);
  });

  it('insertStaged(): a row that breaks a constraint takes its statement back, and the transaction with its counts', () => {
    db.prepare(
      `INSERT INTO temp.staged_findings (seq, scan_id, host, fingerprint, title, threat_level, qod, definition) VALUES (1, 's1', 'h', 'same', 't', 'HIGH', NULL, '{}'),
      (2, 's1', 'h', 'same', 't', 'HIGH', NULL, '{}')`,
    ).run();
    const record = db.transaction(() =>
      risks.insertStaged('a1', 'NMAP', '2026-02-01', [
        [1, 'n1', 't1'],
        [2, 'n2', 't1'],
      ]),
    );
    expect(record).to.throw(/UNIQUE/);
    expect(db.prepare('SELECT COUNT(*) FROM risks').pluck().get()).to.equal(0);
    expect(counters()).to.deep.equal([]);
  });
});
