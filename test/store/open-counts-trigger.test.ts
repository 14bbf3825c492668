/**
 * The overview's open risk counters (migrations 0026, 0030) change only when
 * a column they depend on changes: a re-scan rewrites every re-detected
 * risk's status with the same value, and each cost two upserts for nothing.
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/store/database.js';
import { insertRisks } from '../support/store-rows.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: open risk counters on a risk update', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    insertRisks(db, 2);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  /** Rows the statement changed, the trigger's included (total_changes counts them, changes does not). */
  function rowsWritten(sql: string): number {
    const before = db.prepare('SELECT total_changes()').pluck().get() as number;
    db.prepare(sql).run();
    return (db.prepare('SELECT total_changes()').pluck().get() as number) - before;
  }

  const openHigh = () => db.prepare(`SELECT n FROM open_risk_counts WHERE account_id = 'a1' AND threat_level = 'HIGH'`).pluck().get();

  it('writes no counter when the counted columns keep their values', () => {
    expect(openHigh()).to.equal(2);
    expect(rowsWritten(`UPDATE risks SET status = 'OPEN', last_detected_at = '2026-02-01' WHERE id = 'r1'`)).to.equal(1);
    expect(openHigh()).to.equal(2);
  });

  it('moves the counts when one changes', () => {
    expect(rowsWritten(`UPDATE risks SET status = 'CLOSED' WHERE id = 'r1'`), 'the risk and its count taken away').to.equal(2);
    expect(openHigh()).to.equal(1);
    rowsWritten(`UPDATE risks SET threat_level = 'LOW', status = 'OPEN' WHERE id = 'r1'`);
    expect(openHigh()).to.equal(1);
    expect(db.prepare(`SELECT n FROM open_risk_counts WHERE account_id = 'a1' AND threat_level = 'LOW'`).pluck().get()).to.equal(1);
  });
});
