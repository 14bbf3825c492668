/**
 * E-mail notifications of scheduled runs against a real SMTP server on
 * loopback: the real ScheduledScan and Scan controllers on a real store, scans
 * finished with scripted nmap output, the nodemailer adapter sending, and the
 * received message parsed into its MIME parts. Time is a hand-moved clock.
 */
import { expect } from 'chai';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import type { ScheduledScanReconciler } from '../../src/app/controller/scheduled-scan-reconciler.js';
import { FakeTimers } from '../support/fake-timers.js';
import type { HostResolver, Mailer, ScheduledRun } from '../../src/app/ports.js';
import { RunNotifier } from '../../src/app/run-notifier.js';
import type { ScheduledScanInput } from '../../src/app/scheduled-scans-service.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { MAX_EMAIL_ATTEMPTS } from '../../src/domain/schedules/scheduled-run.js';
import { composeCore, scheduledScanReconciler } from '../../src/main/composition-root.js';
import { smtpMailer } from '../../src/runtime/email/mailers.js';
import { FakeRunner, nmapXml, scriptedScanController, xmlOutput, type NmapHostSpec } from '../support/scripted-scans.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { tcpListener } from '../support/listeners.js';
import { tempDir } from '../support/temp-dir.js';
import { seedRisks } from '../support/report-data.js';
import { TurnCounter } from '../support/turn-counter.js';

const START = Date.parse('2026-05-04T06:00:00.000Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const PUBLIC_URL = 'https://vigil.example.com';
const resolver: HostResolver = { resolve4: async () => ['127.0.0.1'] };

describe('scheduled run e-mails (real SMTP server on loopback)', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let timers: FakeTimers;
  let runner: FakeRunner;
  let sink: SmtpSink;
  let account: Account;
  let scheduler: ScheduledScanReconciler;
  let scanController: ScanReconciler;
  let failures: Array<{ attempts: number; willRetry: boolean }>;

  const clock = { now: () => new Date(timers.now()) };

  function notifier(smtpUrl = sink.url, mailer: Mailer = smtpMailer(smtpUrl, 'vigil@example.com')): RunNotifier {
    return new RunNotifier({
      runs: core.scheduledRuns,
      scans: core.scanRepository,
      risks: core.riskRepository,
      mailer,
      clock,
      timers,
      publicUrl: PUBLIC_URL,
      onFailed: (run, _error, willRetry) => failures.push({ attempts: run.emailAttempts, willRetry }),
    });
  }

  beforeEach(async () => {
    dir = tempDir('vigil-mail-');
    timers = new FakeTimers(START);
    failures = [];
    sink = await startSmtpSink();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }), clock);
    account = core.accounts.createAccount({ name: 'acme' }).account;
    core.targets.create(account, { target: '127.0.0.1', label: 'web-1', tags: ['prod'] }, false);
    runner = new FakeRunner();
    scheduler = scheduledScanReconciler(core, clock, timers, {
      onError: (_id, error) => {
        throw error;
      },
    });
    scanController = scriptedScanController(core, runner, resolver, clock);
  });

  afterEach(async () => {
    core.db.close();
    dir.remove();
    await sink.close();
  });

  function schedule(body: Partial<ScheduledScanInput>) {
    return core.scheduledScans.create(account, {
      name: 'Nightly <prod> & "edge"',
      schedule: 'DAILY',
      scan_types: ['NMAP'],
      filter_set: { tags: ['prod'] },
      email_notification: 'ALWAYS',
      email_to: ['sec@example.com', 'ops@example.com'],
      start_time: new Date(START + MINUTE).toISOString(),
      ...body,
    });
  }

  /** Moves the clock to the schedule's next run and lets the controller create its Scans; returns the run. */
  async function runNow(id: string): Promise<ScheduledRun> {
    const nextRun = core.scheduledScans.get(account, id).nextRun!;
    timers.advance(Date.parse(nextRun) - timers.now());
    await scheduler.reconcile(scheduler.keyOf(core.scheduledScans.get(account, id))!);
    return core.scheduledRuns.runsOf(id).at(-1)!;
  }

  /** Runs a Scan of the run to SUCCEEDED with nmap output listing these hosts. */
  async function finish(scanId: string, hosts: NmapHostSpec[]): Promise<void> {
    const key = scanController.keyOf(core.scanRepository.findByIdUnscoped(scanId)!)!;
    await scanController.reconcile(key);
    runner.statuses.set(scanId, { phase: 'Succeeded', outputs: [xmlOutput(nmapXml(hosts))] });
    await scanController.reconcile(key);
    expect(core.scanRepository.findByIdUnscoped(scanId)!.state).to.equal('SUCCEEDED');
  }

  const openPorts = (...ports: number[]): NmapHostSpec[] => [{ address: '127.0.0.1', ports: ports.map((port) => ({ port })) }];
  const runState = (id: string) => core.scheduledRuns.runsOf(id).at(-1)!;

  it('ALWAYS: once every Scan is done, mails the recipients a summary with text and HTML parts, new risks by target and level, and the dashboard link', async () => {
    const nightly = schedule({});
    const run = await runNow(nightly.id);
    await finish(run.scanIds[0]!, openPorts(8080, 8443));
    await notifier().tick();

    expect(sink.received).to.have.length(1);
    const [mail] = sink.received;
    expect(mail!.envelopeFrom).to.equal('vigil@example.com');
    expect(mail!.envelopeTo.sort()).to.deep.equal(['ops@example.com', 'sec@example.com']);
    expect(mail!.parsed.subject).to.equal('[Vigil] Nightly <prod> & "edge": 2 new risks, 0 closed');
    const text = mail!.parsed.text!;
    expect(text).to.include('127.0.0.1 (web-1)');
    expect(text).to.match(/\[\w+\] Open port 8080\/tcp.*\(NMAP\)/);
    expect(text).to.match(/\[\w+\] Open port 8443\/tcp.*\(NMAP\)/);
    expect(text).to.include(`${PUBLIC_URL}/dashboard/risks`);
    const html = mail!.parsed.html as string;
    expect(html).to.include('Nightly &lt;prod&gt; &amp; &quot;edge&quot;');
    expect(html).to.not.include('<prod>');
    expect(html).to.include(`href="${PUBLIC_URL}/dashboard/risks"`);
    expect(html).to.match(/Open port 8080\/tcp/);
    expect(runState(nightly.id)).to.include({ notification: 'SENT', emailAttempts: 1 });
  });

  it('waits while any Scan of the run is still going, then sends one e-mail', async () => {
    const both = schedule({ scan_types: ['NMAP', 'NMAP_UDP'] });
    const run = await runNow(both.id);
    expect(run.scanIds).to.have.length(2);
    await finish(run.scanIds[0]!, openPorts(8080));
    expect(await notifier().notify(runState(both.id))).to.equal('WAITING');
    await notifier().tick();
    expect(sink.received).to.have.length(0);
    expect(runState(both.id).notification).to.equal('PENDING');

    await finish(run.scanIds[1]!, []);
    await notifier().tick();
    await notifier().tick();
    expect(sink.received).to.have.length(1);
  });

  it('ON_CHANGES: mails when a run opens risks, stays silent when nothing changed, and mails the closed ones', async () => {
    const changes = schedule({ email_notification: 'ON_CHANGES' });
    await finish((await runNow(changes.id)).scanIds[0]!, openPorts(8080, 9090));
    await notifier().tick();
    expect(sink.received.map((mail) => mail.parsed.subject)).to.deep.equal(['[Vigil] Nightly <prod> & "edge": 2 new risks, 0 closed']);

    await finish((await runNow(changes.id)).scanIds[0]!, openPorts(8080, 9090));
    await notifier().tick();
    expect(sink.received).to.have.length(1);
    expect(runState(changes.id).notification).to.equal('NOT_NEEDED');

    await finish((await runNow(changes.id)).scanIds[0]!, openPorts(8080));
    await notifier().tick();
    expect(sink.received).to.have.length(2);
    const closing = sink.received[1]!;
    expect(closing.parsed.subject).to.equal('[Vigil] Nightly <prod> & "edge": 0 new risks, 1 closed');
    expect(closing.parsed.text).to.match(/Closed:\n\s+\[\w+\] Open port 9090\/tcp/);
  });

  it('NEVER: sends nothing, whatever the run found', async () => {
    const never = schedule({ email_notification: 'NEVER' });
    await finish((await runNow(never.id)).scanIds[0]!, openPorts(8080));
    await notifier().tick();
    expect(sink.received).to.have.length(0);
    expect(runState(never.id).notification).to.equal('NOT_NEEDED');
  });

  it('a refused send is retried after a minute, not before, and delivered once', async () => {
    const nightly = schedule({});
    await finish((await runNow(nightly.id)).scanIds[0]!, openPorts(8080));
    sink.refuseNext = 1;
    await notifier().tick();
    expect(sink.received).to.have.length(0);
    expect(runState(nightly.id)).to.include({ notification: 'PENDING', emailAttempts: 1 });
    expect(runState(nightly.id).lastError).to.match(/451|busy/);
    expect(failures).to.deep.equal([{ attempts: 1, willRetry: true }]);

    timers.advance(MINUTE - 1);
    await notifier().tick();
    expect(sink.received).to.have.length(0);
    timers.advance(1);
    await notifier().tick();
    expect(sink.received).to.have.length(1);
    expect(runState(nightly.id)).to.include({ notification: 'SENT', emailAttempts: 2, lastError: null });
  });

  it('gives up after the last attempt when the server stays away, and the run and its Scans are untouched', async () => {
    const closed = await tcpListener({ silent: true });
    const deadUrl = `smtp://127.0.0.1:${closed.port}`;
    await closed.close();
    const nightly = schedule({});
    const run = await runNow(nightly.id);
    await finish(run.scanIds[0]!, openPorts(8080));
    for (let attempt = 1; attempt <= MAX_EMAIL_ATTEMPTS; attempt += 1) {
      await notifier(deadUrl).tick();
      timers.advance(DAY);
    }
    expect(runState(nightly.id)).to.include({ notification: 'FAILED', emailAttempts: MAX_EMAIL_ATTEMPTS });
    expect(failures.map((failure) => failure.willRetry)).to.deep.equal([...Array(MAX_EMAIL_ATTEMPTS - 1).fill(true), false]);
    await notifier(deadUrl).tick();
    expect(failures).to.have.length(MAX_EMAIL_ATTEMPTS);
    expect(core.scanRepository.findByIdUnscoped(run.scanIds[0]!)!.state).to.equal('SUCCEEDED');
  });

  it('a run that opened more risks than one read counts every one, reading them a slice a turn', async () => {
    const nightly = schedule({});
    const run = await runNow(nightly.id);
    const queued = core.scanRepository.findByIdUnscoped(run.scanIds[0]!)!;
    const targetId = queued.requestedTargets[0]!.targetId;
    const opened = seedRisks(
      core.db,
      Array.from({ length: 5_203 }, (_, index) => ({
        accountId: account.id,
        targetId,
        scanType: 'NMAP' as const,
        title: index === 5_100 ? 'The one critical' : `Open port ${index}`,
        threatLevel: index === 5_100 ? ('CRITICAL' as const) : ('INFO' as const),
      })),
    );
    const closed = seedRisks(
      core.db,
      [1, 2, 3].map(() => ({ accountId: account.id, targetId, status: 'CLOSED' as const, threatLevel: 'HIGH' as const })),
    );
    const done = { ...queued, state: 'SUCCEEDED' as const, progress: 100, finishedAt: new Date(timers.now()).toISOString() };
    const risks = { newOpen: opened.map((risk) => risk.id), stillOpen: [], closed: closed.map((risk) => risk.id) };
    expect(core.scanRepository.saveWithResults({ ...done, risks }, [], [], 'QUEUED')).to.equal(true);

    const turns = new TurnCounter();
    let turnsBeforeSend = -1;
    const smtp = smtpMailer(sink.url, 'vigil@example.com');
    await notifier(sink.url, {
      send: (message) => {
        turnsBeforeSend = turns.turn;
        return smtp.send(message);
      },
    }).tick();
    turns.stop();

    const [mail] = sink.received;
    expect(mail!.parsed.subject).to.equal('[Vigil] Nightly <prod> & "edge": 5203 new risks, 3 closed');
    expect(mail!.parsed.text).to.include('New risks:    1 critical, 0 high, 0 medium, 0 low, 5202 info');
    expect(mail!.parsed.text).to.include('[CRITICAL] The one critical (NMAP)');
    expect(mail!.parsed.text).to.include('...and 5153 more');
    // Two reads of the list and eleven slices of its risks for the new ones, one and one for the closed: a turn after each.
    expect(turnsBeforeSend).to.be.at.least(15);
  });

  it('a run that created no Scan (nothing selected) still reports, for ALWAYS, why nothing ran', async () => {
    const empty = schedule({ filter_set: { tags: ['nothing-here'] } });
    await runNow(empty.id);
    await notifier().tick();
    expect(sink.received).to.have.length(1);
    expect(sink.received[0]!.parsed.text).to.include('NMAP not run: the filter_set selects no target');
  });
});
