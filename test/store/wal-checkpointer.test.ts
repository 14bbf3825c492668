/**
 * The write-ahead log is checkpointed in turns of its own while the service
 * runs (WalCheckpointer), not in the commit that takes it past 1,000 pages:
 * that commit copied and flushed the pages, 25-30 ms on top of its own
 * transaction (bench/scale.ts). The database file changes only at a
 * checkpoint, so its size tells when one ran.
 */
import { expect } from 'chai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_FILE, openDatabase, type Database } from '../../src/store/database.js';
import { Metrics } from '../../src/observability/metrics.js';
import { WalCheckpointer, type Checkpoint } from '../../src/store/wal-checkpointer.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: WAL checkpoints in turns of their own', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  const fileSize = () => statSync(join(dir.path, DATABASE_FILE)).size;

  /** One transaction of about 8 MB: some 2,000 pages, past the 1,000 at which a commit checkpoints. */
  function writeMuch(): void {
    const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
    db.transaction(() => {
      for (let row = 0; row < 2_000; row++) insert.run(`${row}`.padEnd(4_000, 'x'));
    })();
  }

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    db.exec('CREATE TABLE filler (body TEXT NOT NULL)');
    db.pragma('wal_checkpoint(TRUNCATE)');
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('without it, the commit that takes the log past 1,000 pages copies them into the database file itself', () => {
    const before = fileSize();
    writeMuch();
    expect(fileSize()).to.be.greaterThan(before + 4_000_000);
  });

  it("leaves the commit alone and copies the log in a later turn, then gives checkpoints back to the connection's commits", async () => {
    const checkpointer = new WalCheckpointer(db, { intervalMs: 10 });
    checkpointer.start();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).to.equal(0);
    const before = fileSize();
    writeMuch();
    expect(fileSize(), 'right after the commit').to.equal(before);
    for (let waited = 0; fileSize() === before && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fileSize(), 'after a checkpoint of its own').to.be.greaterThan(before + 4_000_000);
    await checkpointer.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).to.equal(1000);
  });

  it('hands each checkpoint to its observer, which the metrics take as a duration and a backlog of frames', async () => {
    const seen: Checkpoint[] = [];
    const metrics = new Metrics({ defaultMetrics: false });
    const checkpointer = new WalCheckpointer(db, {
      intervalMs: 10,
      onCheckpoint: (checkpoint) => {
        seen.push(checkpoint);
        metrics.checkpointed(checkpoint);
      },
    });
    checkpointer.start();
    writeMuch();
    for (let waited = 0; !seen.some((c) => c.checkpointedFrames > 0) && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    await checkpointer.stop();
    const copied = seen.find((checkpoint) => checkpoint.checkpointedFrames > 0)!;
    expect(copied.logFrames, 'the 8 MB transaction is some 2,000 frames').to.be.above(1_900);
    expect(copied.checkpointedFrames, 'no reader: all of them copied').to.equal(copied.logFrames);
    expect(copied.ms).to.be.at.least(0);
    // A reader's snapshot holds back what was written after it: the backlog is what the gauge shows.
    const reader = openDatabase(dir.path);
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM filler').get();
      writeMuch();
      const held = new WalCheckpointer(db, { intervalMs: 10, onCheckpoint: metrics.checkpointed });
      held.start();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await held.stop();
      reader.exec('COMMIT');
    } finally {
      reader.close();
    }
    const text = await metrics.registry.metrics();
    expect(text).to.match(/^vigil_wal_checkpoint_duration_seconds_count [1-9]\d*$/m);
    const backlog = Number(/^vigil_wal_uncheckpointed_frames (\d+)$/m.exec(text)?.[1]);
    expect(backlog, text).to.be.above(1_900);
  });
});
