/**
 * A deleted scan's detections and risk lists (migration 0029): the scan
 * repository's delete leaves them with a journal entry, and the sweep
 * deletes at most `limit` of them per call, by ranges of their primary keys,
 * never another scan's, until none is left and the entry goes.
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/store/database.js';
import { JOURNAL_SWEEP, SqliteScanSweeps } from '../../src/store/scan-sweeps.js';
import { SqliteScanRepository } from '../../src/store/scans-repository.js';
import { insertRisks, insertScans } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

function seed(db: Database): void {
  insertRisks(db, 7);
  insertScans(db, ['s1', 's2']);
  const detection = db.prepare('INSERT INTO detections (scan_id, risk_id) VALUES (?, ?)');
  for (let n = 1; n <= 7; n++) detection.run('s1', `r${n}`);
  for (let n = 1; n <= 3; n++) detection.run('s2', `r${n}`);
  // s1: four entries in list 0 and three in list 2; s2: two in list 0.
  db.exec(`INSERT INTO scan_risks (scan_seq, list, position, risk_id) VALUES (1, 0, 0, 'r1'), (1, 0, 1, 'r2'), (1, 0, 2, 'r3'), (1, 0, 3, 'r4'),
    (1, 2, 0, 'r5'), (1, 2, 1, 'r6'), (1, 2, 2, 'r7'), (2, 0, 0, 'r1'), (2, 0, 1, 'r2');`);
}

describe("store: a deleted scan's detections and risk lists are swept in bounded chunks", () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    seed(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const rowsOf = (scanId: string, seq: number) => [
    db.prepare('SELECT count(*) FROM detections WHERE scan_id = ?').pluck().get(scanId),
    db.prepare('SELECT count(*) FROM scan_risks WHERE scan_seq = ?').pluck().get(seq),
  ];

  it('journals the rows with the deletion of the scan, then deletes at most `limit` a call, its own only, and ends the journal entry', () => {
    const scans = new SqliteScanRepository(db);
    const sweeps = new SqliteScanSweeps(db);
    expect(scans.delete('a1', 's1')).to.equal(true);
    expect(scans.delete('a1', 'no-such-scan')).to.equal(false);
    expect(rowsOf('s1', 1)).to.deep.equal([7, 7]);
    expect(sweeps.scans()).to.deep.equal(['s1']);

    const steps: Array<[boolean, unknown[]]> = [];
    for (let call = 0; call < 10 && sweeps.scans().length > 0; call++) steps.push([sweeps.sweep('s1', 3), rowsOf('s1', 1)]);
    expect(steps).to.deep.equal([
      [true, [4, 7]],
      [true, [1, 7]],
      [true, [0, 7]],
      [true, [0, 4]],
      // The rest of list 0, then list 2: a range of positions never spans two lists.
      [true, [0, 3]],
      [true, [0, 0]],
      [false, [0, 0]],
    ]);
    expect(sweeps.scans()).to.deep.equal([]);
    expect(rowsOf('s2', 2)).to.deep.equal([3, 2]);
    expect(sweeps.sweep('s1', 3)).to.equal(false);
  });

  it('lists the scans still to sweep in the order they were deleted', () => {
    const scans = new SqliteScanRepository(db);
    scans.delete('a1', 's2');
    scans.delete('a1', 's1');
    expect(new SqliteScanSweeps(db).scans()).to.deep.equal(['s2', 's1']);
  });

  it('reads and deletes by ranges of the primary keys, never scanning detections or scan_risks', () => {
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    try {
      new SqliteScanSweeps(db);
    } finally {
      db.prepare = prepare;
    }
    const statements = [JOURNAL_SWEEP, ...prepared].filter((sql) => /detections|scan_risks|FROM scans/.test(sql));
    expect(statements).to.have.length(4);
    for (const sql of statements) {
      const args = sql.includes('@') ? [{ scanId: 's1', limit: 3 }] : Array.from(sql.matchAll(/\?/g), () => 1);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((row) => row.detail).join('\n');
      expect(plan, `${sql}\n${plan}`).not.to.match(/^SCAN (detections|scan_risks|scans)\b/m);
      expect(plan, `${sql}\n${plan}`).to.match(/SEARCH (detections|scan_risks|scans) USING (PRIMARY KEY|INDEX)/);
    }
  });
});
