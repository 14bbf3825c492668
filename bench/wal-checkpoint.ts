/**
 * Benchmark: what one checkpoint of the write-ahead log costs the event
 * loop (issue 29). WalCheckpointer (src/store/wal-checkpointer.ts) runs a
 * PASSIVE checkpoint in a turn of its own; bench/scale.ts traced the
 * longest turns of an upload and of a scan's deletion to checkpoints of
 * about 2,500 frames. Here a database opened as the service opens it
 * (openDatabase: WAL, synchronous = FULL) has N of its pages rewritten at
 * random, as index updates are, then one PASSIVE checkpoint copies them;
 * the same with synchronous = OFF for the checkpoint shows how much of it is
 * the database file's flush. Prints figures; asserts nothing.
 *
 *   npx tsx bench/wal-checkpoint.ts     (make bench runs it)
 *
 * 2026-11-29, this machine (2-CPU VM, ext4 on a virtual disk), three runs
 * each: 250 frames 5.5-6.6 ms (0.8-1.1 without the flush), 1,000 16-18 ms
 * (2.8-3.7), 2,500 35-36 ms (6.5), 5,000 55-62 ms (13). The busiest
 * writers add about 2,500 frames in 100 ms: WalCheckpointer runs every
 * 50 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.js';

const FRAMES = [250, 1_000, 2_500, 5_000];
const REPEATS = 3;
const ROWS = 20_000;
const log = (line = '') => process.stdout.write(`${line}\n`);

const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-wal-'));
try {
  const db = openDatabase(dir);
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE bench_pages (k INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  // About one 4 KiB page a row, so that N rows rewritten are about N frames.
  const body = Buffer.alloc(3_900, 7);
  const put = db.prepare('INSERT OR REPLACE INTO bench_pages (k, body) VALUES (?, ?)');
  db.transaction(() => {
    for (let k = 0; k < ROWS; k++) put.run(k, body);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');

  const checkpoint = (synchronous: 'FULL' | 'OFF', frames: number): { ms: number; copied: number } => {
    db.transaction(() => {
      for (let n = 0; n < frames; n++) put.run(Math.floor(Math.random() * ROWS), body);
    })();
    db.pragma(`synchronous = ${synchronous}`);
    const started = performance.now();
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ checkpointed: number }>;
    const ms = performance.now() - started;
    db.pragma('synchronous = FULL');
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { ms, copied: result!.checkpointed };
  };

  log('WAL checkpoint: one PASSIVE checkpoint after N pages rewritten at random, on a database opened as the service opens it');
  log(`${REPEATS} runs each; "without the flush": the same with synchronous = OFF for the checkpoint (not how the service runs)`);
  log();
  log(`${'pages rewritten'.padEnd(16)}${'frames copied'.padStart(14)}${'ms (FULL)'.padStart(18)}${'ms without the flush'.padStart(24)}`);
  for (const frames of FRAMES) {
    const full = Array.from({ length: REPEATS }, () => checkpoint('FULL', frames));
    const off = Array.from({ length: REPEATS }, () => checkpoint('OFF', frames));
    const range = (runs: Array<{ ms: number }>) => {
      const values = runs.map((run) => run.ms);
      return `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}`;
    };
    log(`${String(frames).padEnd(16)}${String(full[0]!.copied).padStart(14)}${range(full).padStart(18)}${range(off).padStart(24)}`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
