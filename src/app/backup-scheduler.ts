/**
 * Scheduled backups made by `vigil serve` itself (issue 28): a CronJob could
 * not mount the ReadWriteOnce volume Vigil holds. At each run of the schedule
 * it writes a backup into its timestamped folder and removes the oldest
 * beyond `keep`. Time comes from the injected Timers; a failed backup is
 * reported and the next run is still scheduled.
 */
import { backupFolderName, backupsBeyond, nextBackupAfter } from '../domain/backups/backup-schedule.js';
import type { ScheduleSpec } from '../domain/schedules/schedule.js';
import type { TimerHandle, Timers } from './controller/timer.js';
import type { BackupFolders } from './ports.js';

export interface BackupSchedulerOptions {
  folders: BackupFolders;
  schedule: ScheduleSpec;
  keep: number;
  timers: Timers;
  onBackup: (folder: string, removed: string[]) => void;
  onError: (error: unknown) => void;
}

export class BackupScheduler {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: BackupSchedulerOptions) {}

  start(): void {
    this.stopped = false;
    this.armAfter(this.options.timers.now());
  }

  /** Waits for a backup under way: the process may exit once this resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Resolves once no backup is under way (the next one armed). */
  async idle(): Promise<void> {
    await this.running;
  }

  private armAfter(now: number): void {
    if (this.stopped) return;
    const at = nextBackupAfter(this.options.schedule, new Date(now));
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined;
      this.running = this.backUp(at).finally(() => {
        this.running = undefined;
        // From the scheduled time, not the end of the copy: a slow backup does not push the next one's time.
        this.armAfter(Math.max(at.getTime(), this.options.timers.now()));
      });
    }, at.getTime() - now);
  }

  /** One backup, then the oldest beyond `keep` removed; both steps are reported, neither stops the schedule. */
  async backUp(at: Date): Promise<void> {
    try {
      const folder = backupFolderName(at);
      await this.options.folders.write(folder);
      const removed = backupsBeyond(await this.options.folders.list(), this.options.keep);
      for (const old of removed) await this.options.folders.remove(old);
      this.options.onBackup(folder, removed);
    } catch (error) {
      this.options.onError(error);
    }
  }
}
