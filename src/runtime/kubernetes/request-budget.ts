/**
 * Each scan's API requests over its life (issue 13: at most 10 a scan,
 * whatever its duration). The controller counts, in memory, every request
 * it sends for a scan (its CR, Secret, Job, followed log, status writes,
 * Events, the reads of a pod-less Job's events), keyed by the scan's id
 * (the Scan CR names its scan by it too), and drops the count when the scan
 * ends. Progress is
 * written to the CR's status on its own only while the budget has room for
 * that write and for the ones still to come (the end status, the end Event,
 * one deletion: the collected Job's, which takes its Secret, or the Secret's
 * of a Job that stays), at most once per 25-point step, and never within
 * 10 s of the scan's last status write. A usual scan (9 requests of its own)
 * so shows one step of progress on `kubectl get scans`; a scan that already
 * spent more (applied with kubectl and waited for a slot) shows none, and
 * so does a scan this process did not start (one running across a restart
 * of Vigil): its count would miss what the previous process sent.
 */

/** Requests a scan may cost over its life. */
export const SCAN_REQUEST_BUDGET = 10;
/**
 * Writes still to come once a scan runs: its end status, its end Event, and
 * one deletion (its collected Job with its Secret, or the Secret of a Job that stays).
 */
export const REQUESTS_AT_END = 3;
/** Progress is written on its own once per this many points. */
export const PROGRESS_STEP = 25;
/** ...and never within this long of the scan's last status write. */
export const PROGRESS_INTERVAL_MS = 10_000;
/** Scans counted at most (a bound: a count is dropped when its scan ends, the oldest first past this). */
const MAX_COUNTED = 65_536;

interface Count {
  spent: number;
  /** This process created the scan's Job, so its count covers the scan's life. */
  startedHere?: boolean;
  /** The progress the CR's status was last written with, and when (ms). */
  progress?: number;
  writtenAt?: number;
}

export class ScanRequestBudget {
  private readonly counts = new Map<string, Count>();

  /** One request (or `requests`) sent for the scan whose id is `key`. */
  spend(key: string, requests = 1): void {
    const count = this.countOf(key);
    count.spent += requests;
  }

  /** This process created the scan's Job: a scan it did not start (it ran across a restart) is never written for progress alone, its count being partial. */
  started(key: string): void {
    this.countOf(key).startedHere = true;
  }

  spent(key: string): number {
    return this.counts.get(key)?.spent ?? 0;
  }

  /** A status write of the scan carried `progress` (written for itself or with another change). */
  statusWritten(key: string, progress: number | undefined, at: number): void {
    const count = this.countOf(key);
    count.writtenAt = at;
    if (progress !== undefined) count.progress = progress;
  }

  /**
   * Whether `progress` calls for a status write of its own now: `'write'`,
   * `'never'` (no new step, or the budget has no room), or the milliseconds
   * to wait before the 10 s since the last status write are over.
   */
  progressWrite(key: string, progress: number, at: number): 'write' | 'never' | number {
    const count = this.counts.get(key);
    if (count?.startedHere !== true) return 'never';
    if (count.spent + 1 + REQUESTS_AT_END > SCAN_REQUEST_BUDGET) return 'never';
    if (Math.floor(progress / PROGRESS_STEP) <= Math.floor((count.progress ?? 0) / PROGRESS_STEP)) return 'never';
    if (progress >= 100) return 'never'; // the end writes 100
    const wait = count.writtenAt === undefined ? 0 : count.writtenAt + PROGRESS_INTERVAL_MS - at;
    return wait > 0 ? wait : 'write';
  }

  /** The scan ended (or its CR is gone): its count goes. */
  drop(key: string): void {
    this.counts.delete(key);
  }

  get size(): number {
    return this.counts.size;
  }

  private countOf(key: string): Count {
    let count = this.counts.get(key);
    if (count === undefined) {
      count = { spent: 0 };
      this.counts.set(key, count);
      if (this.counts.size > MAX_COUNTED) this.counts.delete(this.counts.keys().next().value!);
    }
    return count;
  }
}
