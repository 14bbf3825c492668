/**
 * Checkpoints of the service's write-ahead log in turns of their own. SQLite
 * checkpoints in the commit that takes the log past 1,000 pages: that
 * commit copies the pages into the database file and flushes it, 25-30 ms
 * on top of the transaction (bench/scale.ts: every other chunk of a deleted
 * scan's recompute, 60-68 ms turns). While this runs, the connection leaves
 * checkpoints to it (wal_autocheckpoint = 0): every `intervalMs` it takes a
 * turn of the event loop as any other step of work does (yieldToEventLoop,
 * one step per turn) and runs a PASSIVE checkpoint, which never waits for
 * a reader (the report worker's connection). A worker thread with its own
 * connection was tried: its flushes of the database file made the service's
 * own commit flushes wait (23-39 ms commits), and turns got no shorter.
 *
 * A PASSIVE checkpoint copies every frame a reader does not still need, and
 * SQLite copies no fewer: a backlog left while the report worker read an
 * old snapshot is copied in one turn once it is done. Each checkpoint is
 * handed to `onCheckpoint` (the service's metrics; bench/scale.ts puts
 * them beside the event loop's longest blocks).
 */
import { yieldToEventLoop } from '../app/event-loop.js';
import type { Database } from './database.js';

/** SQLite's default: the commit that takes the log past this many pages checkpoints it. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * How often: a checkpoint with nothing to copy reads the log's index and
 * returns. What one copies costs mostly the database file's flush (with
 * synchronous = FULL): 2,500 frames took 36 ms, 1,000 took 17 ms, and
 * 2,500 without the flush 6.5 ms. The busiest writers (an upload storing
 * its events, a deleted scan's recompute, a chunk per turn) add about
 * 2,500 frames in 100 ms, and at that interval their checkpoints were the
 * longest turns of bench/scale.ts's upload and deletion (39-45 ms); at
 * 50 ms, 19 ms and 31 ms.
 */
const INTERVAL_MS = 50;

/** One checkpoint: when it started (performance.now()), how long it took, and the log's frames and how many of them are now copied. */
export interface Checkpoint {
  startedAt: number;
  ms: number;
  logFrames: number;
  checkpointedFrames: number;
}

export interface WalCheckpointerOptions {
  /** INTERVAL_MS unless a test sets a shorter one. */
  intervalMs?: number;
  /** Each checkpoint, as it ends: the service's metrics, bench/scale.ts's block log. */
  onCheckpoint?: (checkpoint: Checkpoint) => void;
}

export class WalCheckpointer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;
  private readonly onCheckpoint: ((checkpoint: Checkpoint) => void) | undefined;

  constructor(
    private readonly db: Database,
    options: WalCheckpointerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? INTERVAL_MS;
    this.onCheckpoint = options.onCheckpoint;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.db.pragma('wal_autocheckpoint = 0');
    this.timer = setInterval(() => {
      this.running ??= this.checkpointInTurn().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the checkpoints of its own and gives them back to the connection's commits. */
  async stop(): Promise<void> {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  }

  private async checkpointInTurn(): Promise<void> {
    await yieldToEventLoop();
    if (this.timer === undefined || !this.db.open) return;
    const startedAt = performance.now();
    const [result] = this.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    this.onCheckpoint?.({ startedAt, ms: performance.now() - startedAt, logFrames: result!.log, checkpointedFrames: result!.checkpointed });
  }
}
