/**
 * Backups made by `vigil serve` on its schedule (VIGIL_BACKUP_*, issue 28),
 * on a real data directory and real folders, time moved by FakeTimers: each
 * backup in its timestamped folder, the oldest beyond `keep` removed, a
 * backup cut short never counted, a failure reported and the schedule kept.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { BackupScheduler } from '../../src/app/backup-scheduler.js';
import type { BackupFolders } from '../../src/app/ports.js';
import { loadSettings, SettingsError } from '../../src/config/settings.js';
import { backupFolderName, backupsBeyond, parseBackupSchedule } from '../../src/domain/backups/backup-schedule.js';
import { composeCore } from '../../src/main/composition-root.js';
import { FileSystemBackupFolders } from '../../src/store/data-dir-backup.js';
import { FakeTimers } from '../support/fake-timers.js';
import { tempDir } from '../support/temp-dir.js';

const DAY = 24 * 60 * 60 * 1000;

describe('scheduled backups', () => {
  let data: ReturnType<typeof tempDir>;
  let root: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;

  beforeEach(() => {
    data = tempDir();
    root = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: data.path }));
    core.accounts.createAccount({ name: 'acme' });
  });
  afterEach(() => {
    core.db.close();
    data.remove();
    root.remove();
  });

  function scheduler(
    timers: FakeTimers,
    keep: number,
    log: { backups: string[]; removed: string[]; errors: unknown[] },
    folders: BackupFolders = new FileSystemBackupFolders(data.path, root.path),
  ) {
    return new BackupScheduler({
      folders,
      schedule: parseBackupSchedule('DAILY 2026-01-01T02:00:00Z'),
      keep,
      timers,
      onBackup: (folder, removed) => (log.backups.push(folder), log.removed.push(...removed)),
      onError: (error) => log.errors.push(error),
    });
  }

  it('writes one backup a day at the scheduled time, each in its timestamped folder, and keeps the newest N', async () => {
    const timers = new FakeTimers(Date.parse('2026-03-01T12:00:00.000Z'));
    const log = { backups: [] as string[], removed: [] as string[], errors: [] as unknown[] };
    const backups = scheduler(timers, 3, log);
    // Not a backup: never removed, whatever its age.
    mkdirSync(join(root.path, 'operator-notes'));
    backups.start();
    timers.advance(14 * 60 * 60 * 1000 - 1);
    await backups.idle();
    expect(readdirSync(root.path), 'nothing before 02:00').to.deep.equal(['operator-notes']);
    for (let day = 0; day < 5; day++) {
      timers.advance(day === 0 ? 1 : DAY);
      await backups.idle();
    }
    await backups.stop();
    const days = ['02', '03', '04', '05', '06'].map((day) => backupFolderName(new Date(`2026-03-${day}T02:00:00.000Z`)));
    expect(log.backups).to.deep.equal(days);
    expect(readdirSync(root.path).sort()).to.deep.equal([...days.slice(2), 'operator-notes'].sort());
    expect(log.removed).to.deep.equal(days.slice(0, 2));
    expect(log.errors).to.deep.equal([]);
    for (const folder of days.slice(2)) {
      const copy = new BetterSqlite3(join(root.path, folder, 'vigil.db'), { readonly: true });
      expect(copy.pragma('integrity_check')).to.deep.equal([{ integrity_check: 'ok' }]);
      expect((copy.prepare("SELECT COUNT(*) AS n FROM accounts WHERE name = 'acme'").get() as { n: number }).n).to.equal(1);
      copy.close();
    }
  });

  it('never counts a backup cut short (a .partial folder) and removes it with the next backup', async () => {
    const timers = new FakeTimers(Date.parse('2026-03-01T01:00:00.000Z'));
    const log = { backups: [] as string[], removed: [] as string[], errors: [] as unknown[] };
    const cut = join(root.path, `${backupFolderName(new Date('2026-02-28T02:00:00.000Z'))}.partial`);
    mkdirSync(cut);
    writeFileSync(join(cut, 'vigil.db'), 'half');
    const backups = scheduler(timers, 1, log);
    backups.start();
    timers.advance(60 * 60 * 1000);
    await backups.idle();
    await backups.stop();
    expect(readdirSync(root.path)).to.deep.equal([backupFolderName(new Date('2026-03-01T02:00:00.000Z'))]);
    expect(log.removed).to.deep.equal([]);
  });

  it('reports a failed backup and still makes the next one', async () => {
    const timers = new FakeTimers(Date.parse('2026-03-01T01:00:00.000Z'));
    const log = { backups: [] as string[], removed: [] as string[], errors: [] as unknown[] };
    const real = new FileSystemBackupFolders(data.path, root.path);
    let failures = 1;
    const flaky = {
      write: (folder: string) => (failures-- > 0 ? Promise.reject(new Error('disk full')) : real.write(folder)),
      list: () => real.list(),
      remove: (folder: string) => real.remove(folder),
    };
    const backups = scheduler(timers, 2, log, flaky);
    backups.start();
    timers.advance(60 * 60 * 1000);
    await backups.idle();
    expect(String(log.errors[0])).to.include('disk full');
    timers.advance(DAY);
    await backups.idle();
    await backups.stop();
    expect(log.backups).to.deep.equal([backupFolderName(new Date('2026-03-02T02:00:00.000Z'))]);
    expect(existsSync(join(root.path, log.backups[0]!, 'vigil.db'))).to.equal(true);
  });
});

describe('backup settings and names', () => {
  it('reads VIGIL_BACKUP_DIR, VIGIL_BACKUP_SCHEDULE and VIGIL_BACKUP_KEEP, with a daily schedule and 7 kept by default', () => {
    expect(loadSettings({}).backup).to.equal(undefined);
    const defaults = loadSettings({ VIGIL_BACKUP_DIR: '/var/backups/vigil' }).backup!;
    expect(defaults).to.deep.include({ dir: '/var/backups/vigil', keep: 7 });
    expect(defaults.schedule).to.include({ kind: 'DAILY', startTime: '2026-01-01T02:00:00Z' });
    const weekly = loadSettings({
      VIGIL_BACKUP_DIR: '/b',
      VIGIL_BACKUP_SCHEDULE: 'WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin',
      VIGIL_BACKUP_KEEP: '4',
    }).backup!;
    expect(weekly.schedule).to.include({ kind: 'WEEKLY', timeZone: 'Europe/Berlin' });
    expect(weekly.keep).to.equal(4);
  });

  for (const [what, env, message] of [
    ['a cron expression', { VIGIL_BACKUP_DIR: '/b', VIGIL_BACKUP_SCHEDULE: '0 2 * * *' }, /VIGIL_BACKUP_SCHEDULE must be DAILY, WEEKLY or MONTHLY/],
    [
      'a start time without an offset',
      { VIGIL_BACKUP_DIR: '/b', VIGIL_BACKUP_SCHEDULE: 'DAILY 2026-01-01T02:00:00' },
      /VIGIL_BACKUP_SCHEDULE: start_time must be an ISO 8601/,
    ],
    ['an unknown time zone', { VIGIL_BACKUP_DIR: '/b', VIGIL_BACKUP_SCHEDULE: 'DAILY 2026-01-01T02:00:00Z Mars/Olympus' }, /time_zone 'Mars\/Olympus'/],
    ['keeping none', { VIGIL_BACKUP_DIR: '/b', VIGIL_BACKUP_KEEP: '0' }, /VIGIL_BACKUP_KEEP must be a whole number from 1 to 1000/],
    ['a schedule without a folder', { VIGIL_BACKUP_SCHEDULE: 'DAILY 2026-01-01T02:00:00Z' }, /need VIGIL_BACKUP_DIR/],
  ] as const) {
    it(`refuses ${what} with one sentence`, () => {
      expect(() => loadSettings(env)).to.throw(SettingsError, message);
    });
  }

  it('names backups by their time, sortable, and removes only backups beyond the newest N', () => {
    expect(backupFolderName(new Date('2026-03-05T02:00:00.000Z'))).to.equal('vigil-2026-03-05T02-00-00.000Z');
    const folders = [
      'vigil-2026-03-05T02-00-00.000Z',
      'lost+found',
      'vigil-2026-03-03T02-00-00.000Z',
      'vigil-2026-03-04T02-00-00.000Z',
      'vigil-2026-03-06T02-00-00.000Z.partial',
    ];
    expect(backupsBeyond(folders, 2)).to.deep.equal(['vigil-2026-03-03T02-00-00.000Z']);
    expect(backupsBeyond(folders, 5)).to.deep.equal([]);
  });
});
