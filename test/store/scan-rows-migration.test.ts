/**
 * Migration 0029 on a database that already holds scans, risks, detections
 * and risk lists: detections and scan_risks are rebuilt without their
 * foreign key to scans (a deleted scan's rows are swept in chunks instead of
 * cascading in one transaction), with every row, key and index kept and the
 * detections' cascade from risks still in place.
 */
import { expect } from 'chai';
import { applyMigrations, openDatabase, type Database } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { insertRisks, insertScans } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

const DETECTIONS = 'SELECT scan_id, risk_id FROM detections ORDER BY scan_id, risk_id';
const SCAN_RISKS = 'SELECT scan_seq, list, position, risk_id FROM scan_risks ORDER BY scan_seq, list, position';

function seed(db: Database): void {
  insertRisks(db, 3);
  insertScans(db, ['s1', 's2']);
  const detection = db.prepare('INSERT INTO detections (scan_id, risk_id) VALUES (?, ?)');
  for (const [scanId, riskId] of [
    ['s1', 'r1'],
    ['s1', 'r2'],
    ['s2', 'r2'],
    ['s2', 'r3'],
  ])
    detection.run(scanId, riskId);
  db.exec(`INSERT INTO scan_risks (scan_seq, list, position, risk_id) VALUES (1, 0, 0, 'r2'), (1, 0, 1, 'r1'), (2, 0, 0, 'r3'), (2, 1, 0, 'r2');`);
}

describe('store: migration 0029 takes the foreign key to scans off detections and scan_risks', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(
      dir.path,
      MIGRATIONS.filter((migration) => migration.version <= 28),
    );
    seed(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('keeps every row, key and index, and the foreign key to risks only', () => {
    const detections = db.prepare(DETECTIONS).all();
    const scanRisks = db.prepare(SCAN_RISKS).all();
    const schemaOf = (table: string) => ({
      columns: db.pragma(`table_info(${table})`),
      indexes: (db.pragma(`index_list(${table})`) as Array<{ name: string; unique: number; origin: string }>)
        .map(({ name, unique, origin }) => ({ name, unique, origin, columns: db.pragma(`index_info(${name})`) }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      withoutRowid: (db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').pluck().get(table) as number) === 1,
      strict: (db.prepare('SELECT strict FROM pragma_table_list WHERE name = ?').pluck().get(table) as number) === 1,
    });
    const before = { detections: schemaOf('detections'), scanRisks: schemaOf('scan_risks') };

    applyMigrations(db, MIGRATIONS);

    expect(db.prepare(DETECTIONS).all()).to.deep.equal(detections);
    expect(db.prepare(SCAN_RISKS).all()).to.deep.equal(scanRisks);
    expect({ detections: schemaOf('detections'), scanRisks: schemaOf('scan_risks') }).to.deep.equal(before);
    expect(before.detections.indexes.map((index) => index.name)).to.include('detections_by_risk');
    expect(before.detections.withoutRowid && before.scanRisks.withoutRowid).to.equal(true);
    const foreignKeys = (table: string) =>
      (db.pragma(`foreign_key_list(${table})`) as Array<{ table: string; from: string; on_delete: string }>).map(({ table, from, on_delete }) => ({
        table,
        from,
        on_delete,
      }));
    expect(foreignKeys('detections')).to.deep.equal([{ table: 'risks', from: 'risk_id', on_delete: 'CASCADE' }]);
    expect(foreignKeys('scan_risks')).to.deep.equal([]);
    expect(db.pragma('foreign_key_check')).to.deep.equal([]);
    expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
  });

  it("still deletes a risk's detections with it, and leaves a deleted scan's rows for the sweep", () => {
    applyMigrations(db, MIGRATIONS);

    db.prepare("DELETE FROM risks WHERE id = 'r2'").run();
    expect(db.prepare(DETECTIONS).all()).to.deep.equal([
      { scan_id: 's1', risk_id: 'r1' },
      { scan_id: 's2', risk_id: 'r3' },
    ]);
    db.prepare("DELETE FROM scans WHERE id = 's1'").run();
    expect(db.prepare("SELECT count(*) FROM detections WHERE scan_id = 's1'").pluck().get()).to.equal(1);
    expect(db.prepare('SELECT count(*) FROM scan_risks WHERE scan_seq = 1').pluck().get()).to.equal(2);
  });
});
