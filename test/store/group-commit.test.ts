/**
 * Group commit (src/app/group-commit.ts) on a real SQLite file: items
 * submitted together share one transaction, each settles only after its
 * commit, a failing item is rolled back alone, and an error that aborts the
 * transaction fails the whole batch. The flush is driven by hand, so nothing
 * depends on timing.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { GroupCommit } from '../../src/app/group-commit.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: group commit', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let flushes: Array<() => void>;
  let group: GroupCommit;
  let commits: number;

  const count = (reader: Database = db) => (reader.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
  const insert = (value: string) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(value).lastInsertRowid;
  const settled = <T>(promise: Promise<T>) =>
    promise.then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.message }),
    );

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path, []);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE) STRICT');
    flushes = [];
    commits = 0;
    group = new GroupCommit(
      (fn) => {
        const outer = !db.inTransaction;
        const result = db.transaction(fn).immediate();
        if (outer) commits += 1;
        return result;
      },
      () => db.inTransaction,
      (flush) => flushes.push(flush),
    );
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('runs the items submitted before a flush in one transaction, in order, and resolves them after the commit', async () => {
    const results = [group.run(insert('a')), group.run(insert('b')), group.run(() => count())];
    expect(flushes).to.have.length(1);
    expect(count()).to.equal(0);
    // Another connection sees nothing until the batch commits.
    const other = new BetterSqlite3(join(dir.path, 'vigil.db'), { readonly: true });
    try {
      flushes[0]!();
      expect(commits).to.equal(1);
      expect(count(other)).to.equal(2);
    } finally {
      other.close();
    }
    // The third item saw the two before it.
    expect(await Promise.all(results)).to.deep.equal([1, 2, 2]);
  });

  it('rolls back a failing item alone; the others commit and resolve', async () => {
    const results = [group.run(insert('a')), group.run(insert('a')), group.run(insert('c'))].map(settled);
    flushes[0]!();
    expect(await Promise.all(results)).to.deep.equal([{ value: 1 }, { error: 'UNIQUE constraint failed: t.v' }, { value: 2 }]);
    expect(db.prepare('SELECT v FROM t ORDER BY id').all()).to.deep.equal([{ v: 'a' }, { v: 'c' }]);
    expect(commits).to.equal(1);
  });

  it('rolls back an item that wrote before it threw', async () => {
    const results = [
      group.run(() => {
        insert('x')();
        throw new Error('refused after writing');
      }),
      group.run(insert('y')),
    ].map(settled);
    flushes[0]!();
    expect(await Promise.all(results)).to.deep.equal([{ error: 'refused after writing' }, { value: 1 }]);
    expect(db.prepare('SELECT v FROM t').all()).to.deep.equal([{ v: 'y' }]);
  });

  it('fails every item of the batch when an error aborts the transaction, and commits none of them', async () => {
    const results = [
      group.run(insert('a')),
      group.run(() => {
        db.exec('ROLLBACK'); // as SQLite does on SQLITE_FULL
        throw new Error('database or disk is full');
      }),
      group.run(insert('c')),
    ].map(settled);
    flushes[0]!();
    const outcomes = await Promise.all(results);
    expect(outcomes.every((outcome) => 'error' in outcome)).to.equal(true);
    expect(count()).to.equal(0);
  });

  it('starts a new batch after a flush', async () => {
    const first = group.run(insert('a'));
    flushes[0]!();
    await first;
    const second = group.run(insert('b'));
    expect(flushes).to.have.length(2);
    flushes[1]!();
    expect(await second).to.equal(2);
    expect(commits).to.equal(2);
  });
});
