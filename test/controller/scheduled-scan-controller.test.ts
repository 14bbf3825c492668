/**
 * The ScheduledScan controller (DESIGN.md 4, 5 and 9) against a real SQLite
 * store, with time moved by hand: what is due runs, what is not requeues at
 * its next run, missed runs run once, a run is never created twice (a second
 * controller, a restart), and the Targets are the ones the filter selects at
 * run time.
 */
import { expect } from 'chai';
import type { ScheduledScanReconciler } from '../../src/app/controller/scheduled-scan-reconciler.js';
import { FakeTimers } from '../support/fake-timers.js';
import type { ScheduledScanInput } from '../../src/app/scheduled-scans-service.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore, scheduledScanReconciler } from '../../src/main/composition-root.js';
import { tempDir } from '../support/temp-dir.js';
import { receiveEvents } from '../support/event-receiver.js';

const START = Date.parse('2026-03-01T08:00:00.000Z');
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

describe('the ScheduledScan controller (real store, hand-moved clock)', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let timers: FakeTimers;
  let account: Account;
  let errors: unknown[];

  const clock = { now: () => new Date(timers.now()) };

  /** A schedule's work queue key: its account's namespace and its object name. */
  const keyOf = (row: { objectName: string }) => `${account.namespace}/${row.objectName}`;
  const controller = (): ScheduledScanReconciler => scheduledScanReconciler(core, clock, timers, { onError: (_id, error) => errors.push(error) });

  function schedule(body: Partial<ScheduledScanInput> = {}) {
    return core.scheduledScans.create(account, {
      schedule: 'DAILY',
      scan_types: ['NMAP'],
      filter_set: { tags: ['prod'] },
      email_notification: 'NEVER',
      start_time: new Date(START + HOUR).toISOString(),
      ...body,
    });
  }

  function target(address: string, tags: string[] = ['prod']) {
    return core.targets.create(account, { target: address, tags }, false);
  }

  const scansOf = (scheduledScanId: string) =>
    core.scanRepository
      .eventsFor(account.id)
      .filter((event) => event.type === 'scan.created')
      .map((event) => event.data as { id: string; scheduled_by: string | null })
      .filter((scan) => scan.scheduled_by === scheduledScanId)
      .map((scan) => core.scanRepository.findById(account.id, scan.id)!);

  beforeEach(() => {
    dir = tempDir('vigil-scheduler-');
    timers = new FakeTimers(START);
    errors = [];
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }), clock);
    account = core.accounts.createAccount({ name: 'acme' }).account;
    receiveEvents(core.webhookEndpoints, account.id);
  });

  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('does nothing before next_run and asks to be requeued exactly then', async () => {
    target('198.51.99.10');
    const daily = schedule();
    const result = await controller().reconcile(keyOf(daily));
    expect(result).to.deep.equal({ requeueAfterMs: HOUR });
    expect(scansOf(daily.id)).to.have.length(0);
  });

  it('never waits longer than the cap, so a far-off run is read again (clock changes, edits by another process)', async () => {
    const monthly = schedule({ schedule: 'MONTHLY', start_time: new Date(START + 20 * DAY).toISOString() });
    expect(await controller().reconcile(keyOf(monthly))).to.deep.equal({ requeueAfterMs: HOUR });
  });

  it('when due, creates one Scan per type with scheduled_by, deterministic names, and advances next_run and last_ran', async () => {
    target('198.51.99.10');
    const daily = schedule({ scan_types: ['NMAP', 'SSLYZE'] });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));

    const scans = scansOf(daily.id);
    expect(scans.map((scan) => scan.type).sort()).to.deep.equal(['NMAP', 'SSLYZE']);
    const runAt = (START + HOUR) / 1000;
    expect(scans.map((scan) => scan.name).sort()).to.deep.equal([`scheduledscan-${daily.id}-${runAt}-nmap`, `scheduledscan-${daily.id}-${runAt}-sslyze`]);
    expect(scans.every((scan) => scan.scheduledBy === daily.id && scan.state === 'QUEUED')).to.equal(true);

    const after = core.scheduledScans.get(account, daily.id);
    expect(after.lastRan).to.equal(new Date(START + HOUR).toISOString());
    expect(after.nextRun).to.equal(new Date(START + HOUR + DAY).toISOString());
    expect(core.scheduledRuns.runsOf(daily.id)).to.have.length(1);
  });

  it('selects the Targets the filter matches at run time: a Target tagged after the schedule was made is scanned', async () => {
    const daily = schedule({ filter_set: { tags: ['prod'] } });
    target('198.51.99.10');
    target('198.51.99.11', ['staging']);
    timers.advance(HOUR);
    target('198.51.99.12');
    await controller().reconcile(keyOf(daily));
    const scanned = scansOf(daily.id).flatMap((scan) => scan.requestedTargets.map((t) => t.target));
    expect(scanned.sort()).to.deep.equal(['198.51.99.10', '198.51.99.12']);
  });

  it('takes target_ids and tags together, each Target once', async () => {
    const byId = target('198.51.99.20', []);
    target('198.51.99.21');
    const both = target('198.51.99.22');
    const daily = schedule({ filter_set: { target_ids: [byId.id, both.id], tags: ['prod'] } });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));
    const scanned = scansOf(daily.id).flatMap((scan) => scan.requestedTargets.map((t) => t.target));
    expect(scanned.sort()).to.deep.equal(['198.51.99.20', '198.51.99.21', '198.51.99.22']);
  });

  it('splits a run like any Scan, naming every chunk', async () => {
    for (let index = 0; index < 12; index += 1) target(`198.51.99.${100 + index}`);
    const daily = schedule({ scan_types: ['SSLYZE'] });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));
    const scans = scansOf(daily.id);
    expect(scans.length).to.be.greaterThan(1);
    expect(new Set(scans.map((scan) => scan.name)).size).to.equal(scans.length);
    expect(scans.reduce((sum, scan) => sum + scan.requestedTargets.length, 0)).to.equal(12);
  });

  it('runs missed while the service was down once, at the latest missed time, and schedules the next one after now', async () => {
    target('198.51.99.10');
    const daily = schedule();
    timers.advance(HOUR + 3 * DAY + 2 * HOUR); // three daily runs missed, two hours past the last
    await controller().reconcile(keyOf(daily));
    expect(scansOf(daily.id)).to.have.length(1);
    const after = core.scheduledScans.get(account, daily.id);
    expect(after.lastRan).to.equal(new Date(START + HOUR + 3 * DAY).toISOString());
    expect(after.nextRun).to.equal(new Date(START + HOUR + 4 * DAY).toISOString());
    expect(await controller().reconcile(keyOf(daily))).to.deep.equal({ requeueAfterMs: HOUR }); // the cap: the next run is 22 hours away
    expect(scansOf(daily.id)).to.have.length(1);
  });

  it('runs a ONCE schedule once and then has no next run', async () => {
    target('198.51.99.10');
    const once = schedule({ schedule: 'ONCE' });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(once));
    expect(core.scheduledScans.get(account, once.id).nextRun).to.equal(null);
    timers.advance(10 * DAY);
    expect(await controller().reconcile(keyOf(once))).to.equal(undefined);
    expect(scansOf(once.id)).to.have.length(1);
  });

  it('does not run a disabled schedule, and keeps its configuration', async () => {
    target('198.51.99.10');
    const disabled = schedule({ disabled: true });
    timers.advance(2 * DAY);
    expect(await controller().reconcile(keyOf(disabled))).to.equal(undefined);
    expect(scansOf(disabled.id)).to.have.length(0);
    expect(core.scheduledScans.get(account, disabled.id)).to.include({ schedule: 'DAILY', disabled: true, nextRun: null });
  });

  it('never creates a run twice: two controllers reconciling the same due schedule create one set of Scans', async () => {
    target('198.51.99.10');
    const daily = schedule({ scan_types: ['NMAP', 'NUCLEI'] });
    timers.advance(HOUR);
    const [first, second] = [controller(), controller()];
    await Promise.all([first.reconcile(first.keyOf(daily)!), second.reconcile(second.keyOf(daily)!), first.reconcile(first.keyOf(daily)!)]);
    expect(scansOf(daily.id)).to.have.length(2);
    expect(core.scheduledRuns.runsOf(daily.id)).to.have.length(1);
    expect(errors).to.deep.equal([]);
  });

  it('a controller holding a stale copy (another process ran it meanwhile) creates nothing', async () => {
    target('198.51.99.10');
    const daily = schedule();
    timers.advance(HOUR);
    const stale = core.scheduledScanRepository.findByIdUnscoped(daily.id)!;
    await controller().reconcile(keyOf(daily));
    // The stale next_run no longer matches the row: the compare-and-set refuses it.
    expect(core.scheduledScanRepository.recordRun(daily.id, stale.nextRun!, stale.nextRun!, null)).to.equal(false);
    expect(scansOf(daily.id)).to.have.length(1);
  });

  it('a restart (a new controller on the same database) picks up what is due and does not repeat what ran', async () => {
    target('198.51.99.10');
    const ran = schedule();
    const due = schedule({ start_time: new Date(START + 2 * HOUR).toISOString() });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(ran));

    timers.advance(2 * HOUR); // the process was down when `due` was due
    const restarted = controller();
    restarted.start();
    await settle();
    await restarted.stop();
    expect(scansOf(ran.id)).to.have.length(1);
    expect(scansOf(due.id)).to.have.length(1);
  });

  it('started, it wakes itself at next_run (no polling by the test)', async () => {
    target('198.51.99.10');
    const daily = schedule();
    const running = controller();
    running.start();
    await settle();
    expect(scansOf(daily.id)).to.have.length(0);
    timers.advance(HOUR - 1);
    await settle();
    expect(scansOf(daily.id)).to.have.length(0);
    timers.advance(1);
    await settle();
    expect(scansOf(daily.id)).to.have.length(1);
    timers.advance(DAY);
    await settle();
    expect(scansOf(daily.id)).to.have.length(2);
    await running.stop();
  });

  it('records a run whose filter selects nothing, with the reason, and creates no Scan', async () => {
    const daily = schedule({ email_notification: 'ALWAYS', email_to: ['sec@example.com'] });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));
    const [run] = core.scheduledRuns.runsOf(daily.id);
    expect(run!.scanIds).to.deep.equal([]);
    expect(run!.skipped).to.deep.equal([{ scanType: 'NMAP', reason: 'the filter_set selects no target' }]);
    expect(run!.notification).to.equal('PENDING');
    expect(core.scheduledScans.get(account, daily.id).nextRun).to.equal(new Date(START + HOUR + DAY).toISOString());
  });

  it('skips a type the account may no longer run (plan changed since), with the reason, and still runs the others', async () => {
    account = core.accounts.createAccount({ name: 'paying', plan: 'paid' }).account;
    receiveEvents(core.webhookEndpoints, account.id);
    target('198.51.99.10');
    const daily = schedule({ scan_types: ['NMAP', 'OWASP_ZAP_ACTIVE'] });
    core.db.prepare(`UPDATE accounts SET plan = 'free' WHERE id = ?`).run(account.id);
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));
    const [run] = core.scheduledRuns.runsOf(daily.id);
    expect(scansOf(daily.id).map((scan) => scan.type)).to.deep.equal(['NMAP']);
    expect(run!.scanIds).to.have.length(1);
    expect(run!.skipped).to.have.length(1);
    expect(run!.skipped[0]!.scanType).to.equal('OWASP_ZAP_ACTIVE');
    expect(run!.skipped[0]!.reason).to.match(/paid plan/);
  });

  it('owes no e-mail for NEVER or for an empty email_to', async () => {
    target('198.51.99.10');
    const never = schedule({ email_notification: 'NEVER', email_to: ['sec@example.com'] });
    const nobody = schedule({ email_notification: 'ALWAYS' });
    timers.advance(HOUR);
    await controller().reconcile(keyOf(never));
    await controller().reconcile(keyOf(nobody));
    expect(core.scheduledRuns.runsOf(never.id)[0]!.notification).to.equal('NOT_NEEDED');
    expect(core.scheduledRuns.runsOf(nobody.id)[0]!.notification).to.equal('NOT_NEEDED');
  });

  it('a deleted schedule is forgotten', async () => {
    const daily = schedule();
    core.scheduledScans.delete(account, daily.id);
    timers.advance(DAY);
    expect(await controller().reconcile(keyOf(daily))).to.equal(undefined);
  });

  it('deleting a Target removes it from the schedules that select it by id', async () => {
    const kept = target('198.51.99.30', []);
    const gone = target('198.51.99.31', []);
    const daily = schedule({ filter_set: { target_ids: [kept.id, gone.id] } });
    core.targets.delete(account, gone.id);
    expect(core.scheduledScans.get(account, daily.id).filterTargetIds).to.deep.equal([kept.id]);
    timers.advance(HOUR);
    await controller().reconcile(keyOf(daily));
    expect(scansOf(daily.id).flatMap((scan) => scan.requestedTargets.map((t) => t.target))).to.deep.equal(['198.51.99.30']);
  });
});

/** Lets queued reconciles (promise continuations) run to completion. */
async function settle(): Promise<void> {
  for (let index = 0; index < 20; index += 1) await new Promise((resolve) => setImmediate(resolve));
}
