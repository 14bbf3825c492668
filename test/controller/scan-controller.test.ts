import { expect } from 'chai';
import type { ResolvedTarget, Scan } from '../../src/domain/scans/scan.js';
import type { HostResolver, ReleasedWorkload, WorkloadRunner, WorkloadStatus } from '../../src/app/ports.js';
import { ScanReconciler, type ScanReconcilerOptions } from '../../src/app/controller/scan-reconciler.js';
import type { AddressRefusal } from '../../src/domain/scans/resolve-targets.js';
import { GroupCommit } from '../../src/app/group-commit.js';
import { FakeTimers } from '../support/fake-timers.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { composeCore } from '../../src/main/composition-root.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { tempDir } from '../support/temp-dir.js';
import { RESULT_IN_ROW_MAX_BYTES } from '../../src/domain/scans/result-file.js';
import { receiveEvents } from '../support/event-receiver.js';
import { nmapReport } from '../support/nmap-report.js';

/** A fake cluster: records every action in order and answers observe() with a scripted status. */
class FakeRunner implements WorkloadRunner {
  readonly actions: string[] = [];
  readonly statuses = new Map<string, WorkloadStatus>();
  private listener: (scanId: string) => void = () => undefined;

  async start(scan: Scan, targets: readonly ResolvedTarget[]): Promise<void> {
    this.actions.push(`start ${scan.id} ${targets.map((target) => target.target).join(',')}`);
    this.statuses.set(scan.id, { phase: 'Running', progress: 0 });
  }
  async observe(scanId: string): Promise<WorkloadStatus> {
    this.actions.push(`observe ${scanId}`);
    return this.statuses.get(scanId) ?? { phase: 'Missing' };
  }
  async stop(scanId: string): Promise<void> {
    this.actions.push(`stop ${scanId}`);
  }
  async release(scanId: string, workload: ReleasedWorkload): Promise<void> {
    this.actions.push(`release ${scanId} ${workload}`);
    this.statuses.delete(scanId);
  }
  async deleteCollectedWorkload(scanId: string): Promise<void> {
    this.actions.push(`delete collected ${scanId}`);
  }
  onChange(listener: (scanId: string) => void): void {
    this.listener = listener;
  }
  notify(scanId: string): void {
    this.listener(scanId);
  }
}

const resolver: HostResolver = {
  async resolve4(host: string) {
    const table: Record<string, string[]> = { 'public.example.com': ['93.184.216.34'], 'internal.example.com': ['10.0.0.7'] };
    if (table[host] === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return table[host];
  },
};

describe('the Scan controller (one reconcile at a time, against a fake runner)', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let runner: FakeRunner;
  let timers: FakeTimers;
  let controller: ScanReconciler;
  let account: Account;

  function build(maxConcurrentScans = 10, extra: Partial<ScanReconcilerOptions> = {}): void {
    controller = new ScanReconciler({
      scans: core.scanRepository,
      accounts: core.accountRepository,
      runner,
      resolver,
      resultFiles: core.resultFiles,
      history: core.history,
      staging: core.staging,
      clock: { now: () => new Date(timers.now()) },
      timers,
      maxConcurrentScans,
      allowTargets: parseCidrList('127.0.0.0/8'),
      onError: (key, error) => {
        throw new Error(`reconcile of ${key} failed: ${String(error)}`);
      },
      pollMs: 1000,
      admissionRetryMs: 5000,
      ...extra,
    });
  }

  beforeEach(() => {
    dir = tempDir();
    timers = new FakeTimers();
    // The store's clock is the controller's, so that the endpoint below is registered before the scans' events happen.
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }), { now: () => new Date(timers.now()) });
    account = core.accounts.createAccount({ name: 'acme' }).account;
    receiveEvents(core.webhookEndpoints, account.id);
    runner = new FakeRunner();
    build();
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  const startScan = (targets: string[], type: Scan['type'] = 'NMAP') => core.scans.start(account, { type, targets })[0]!;
  const stateOf = (id: string) => core.scans.get(account, id);
  const eventTypes = () => core.scanRepository.eventsFor(account.id).map((event) => `${event.type}:${(event.data as { state: string }).state}`);

  it('starts the workload of a QUEUED scan with its resolved targets and moves it to RUNNING', async () => {
    const scan = startScan(['127.0.0.1', 'public.example.com']);
    const result = await controller.reconcile(controller.keyOf(scan)!);
    expect(runner.actions).to.deep.equal([`start ${scan.id} 127.0.0.1,public.example.com`]);
    expect(result).to.deep.equal({ requeueAfterMs: 1000 });
    const running = stateOf(scan.id);
    expect(running.state).to.equal('RUNNING');
    expect(running.startedAt).to.be.a('string');
    expect(running.resolvedTargets.map((t) => t.addresses)).to.deep.equal([['127.0.0.1'], ['93.184.216.34']]);
    expect(eventTypes()).to.deep.equal(['scan.created:QUEUED', 'scan.updated:RUNNING']);
  });

  it('skips targets that resolve to private addresses or fail DNS, and scans the rest', async () => {
    const refusals: AddressRefusal[] = [];
    build(10, { onAddressRefused: (refusal) => refusals.push(refusal) });
    const scan = startScan(['internal.example.com', 'missing.example.com', 'public.example.com']);
    await controller.reconcile(controller.keyOf(scan)!);
    const running = stateOf(scan.id);
    expect(running.resolvedTargets.map((t) => t.target)).to.deep.equal(['public.example.com']);
    // The tenant reads the rule, not the internal DNS answer (issue 26); the address goes to the service's log.
    const privateReason =
      'resolves to an address in the 10.0.0.0/8 private-use (RFC 1918) range; only public addresses are scanned (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)';
    expect(running.skippedTargets.map((t) => t.skippedReason)).to.deep.equal([privateReason, 'DNS lookup failed: ENOTFOUND']);
    expect(JSON.stringify(core.scans.get(account, scan.id))).not.to.include('10.0.0.7');
    expect(refusals).to.deep.equal([{ scanId: scan.id, host: 'internal.example.com', address: '10.0.0.7', reason: privateReason }]);
    expect(runner.actions).to.deep.equal([`start ${scan.id} public.example.com`]);
  });

  it('fails a scan whose every target is skipped, without starting anything', async () => {
    const scan = startScan(['internal.example.com']);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(runner.actions).to.deep.equal([]);
    const failed = stateOf(scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.conditions.at(-1)).to.include({ reason: 'NoScannableTargets' });
  });

  it('keeps a scan QUEUED while the concurrency limit is used up, and admits it when a slot frees', async () => {
    build(1);
    const first = startScan(['127.0.0.1']);
    const second = startScan(['127.0.0.2']);
    await controller.reconcile(controller.keyOf(first)!);
    expect(await controller.reconcile(controller.keyOf(second)!)).to.deep.equal({ requeueAfterMs: 5000 });
    expect(stateOf(second.id).state).to.equal('QUEUED');
    runner.statuses.set(first.id, { phase: 'Succeeded', outputs: [] });
    await controller.reconcile(controller.keyOf(first)!);
    await controller.reconcile(controller.keyOf(second)!);
    expect(stateOf(second.id).state).to.equal('RUNNING');
    expect(runner.actions.filter((a) => a.startsWith('start'))).to.have.length(2);
  });

  it('never admits more scans than the limit when many are reconciled at once', async () => {
    build(3);
    const scans = Array.from({ length: 12 }, (_, i) => startScan([`127.0.1.${i + 1}`]));
    await Promise.all(scans.map((scan) => controller.reconcile(controller.keyOf(scan)!)));
    expect(scans.filter((scan) => stateOf(scan.id).state === 'RUNNING')).to.have.length(3);
    expect(runner.actions.filter((a) => a.startsWith('start'))).to.have.length(3);
  });

  it('wakes only as many queued scans as slots freed when a scan finishes', async () => {
    build(2);
    const running = [startScan(['127.0.0.1']), startScan(['127.0.0.2'])];
    for (const scan of running) await controller.reconcile(controller.keyOf(scan)!);
    const waiting = [startScan(['127.0.0.3']), startScan(['127.0.0.4']), startScan(['127.0.0.5'])];
    runner.statuses.set(running[0]!.id, { phase: 'Succeeded', outputs: [] });
    const queued = recordQueued(controller);
    await controller.reconcile(controller.keyOf(running[0]!)!);
    expect(queued).to.deep.equal([controller.keyOf(waiting[0]!)]);
  });

  it('a freed slot wakes a queued scan that can take it, not one already being started (still QUEUED until RUNNING is saved)', async () => {
    build(2);
    const first = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(first)!);
    const starting = startScan(['127.0.0.2']);
    const waiting = startScan(['127.0.0.3']);
    // The second scan's workload start is in progress (a spawn round trip) when the first finishes.
    let finishStart: (() => void) | undefined;
    const start = runner.start.bind(runner);
    runner.start = (scan, targets) =>
      scan.id === starting.id ? new Promise<void>((resolve) => (finishStart = () => void start(scan, targets).then(resolve))) : start(scan, targets);
    const admitting = controller.reconcile(controller.keyOf(starting)!);
    for (let turn = 0; turn < 1000 && finishStart === undefined; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(stateOf(starting.id).state).to.equal('QUEUED');
    runner.statuses.set(first.id, { phase: 'Succeeded', outputs: [] });
    const queued = recordQueued(controller);
    await controller.reconcile(controller.keyOf(first)!);
    expect(queued).to.deep.equal([controller.keyOf(waiting)]);
    finishStart!();
    await admitting;
    await controller.reconcile(controller.keyOf(waiting)!);
    expect([stateOf(starting.id).state, stateOf(waiting.id).state]).to.deep.equal(['RUNNING', 'RUNNING']);
  });

  it("hands a finished scan's slot to the next before its workload is released (removing its files does not hold the slot)", async () => {
    build(1);
    const first = startScan(['127.0.0.1']);
    const second = startScan(['127.0.0.2']);
    await controller.reconcile(controller.keyOf(first)!);
    runner.statuses.set(first.id, { phase: 'Succeeded', outputs: [] });
    let releaseFirst: () => void = () => undefined;
    const release = runner.release.bind(runner);
    runner.release = (scanId: string, workload: ReleasedWorkload) =>
      scanId === first.id ? new Promise<void>((resolve) => (releaseFirst = () => void release(scanId, workload).then(resolve))) : release(scanId, workload);
    const queued = recordQueued(controller);
    const finishing = controller.reconcile(controller.keyOf(first)!);
    // The release of the first is still pending: the second is already woken, and admitted.
    for (let turn = 0; turn < 1000 && queued.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(stateOf(first.id).state).to.equal('SUCCEEDED');
    expect(queued).to.deep.equal([controller.keyOf(second)]);
    await controller.reconcile(controller.keyOf(second)!);
    expect(stateOf(second.id).state).to.equal('RUNNING');
    expect(runner.actions).to.not.include(`release ${first.id} deleted`);
    releaseFirst();
    await finishing;
    expect(runner.actions.slice(-2)).to.deep.equal([`release ${first.id} deleted`, `delete collected ${first.id}`]);
  });

  it('records progress from the workload, never going backwards', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    runner.statuses.set(scan.id, { phase: 'Running', progress: 40.7 });
    await controller.reconcile(controller.keyOf(scan)!);
    expect(stateOf(scan.id).progress).to.equal(40);
    runner.statuses.set(scan.id, { phase: 'Running', progress: 12 });
    await controller.reconcile(controller.keyOf(scan)!);
    expect(stateOf(scan.id).progress).to.equal(40);
    expect(eventTypes()).to.deep.equal(['scan.created:QUEUED', 'scan.updated:RUNNING', 'scan.updated:RUNNING']);
  });

  it('stores result files and moves a finished scan to SUCCEEDED with progress 100', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    runner.statuses.set(scan.id, { phase: 'Succeeded', outputs: [{ file: 'nmap.xml', contentType: 'application/xml', content: Buffer.from('<nmaprun/>') }] });
    await controller.reconcile(controller.keyOf(scan)!);
    const done = stateOf(scan.id);
    expect(done).to.include({ state: 'SUCCEEDED', progress: 100 });
    expect(done.results).to.have.length(1);
    const { file, content } = await core.scans.openResult(account, done.results[0]!.resultId);
    expect(file).to.include({ fileName: 'nmap.xml', contentType: 'application/xml', size: 10 });
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).to.equal('<nmaprun/>');
    expect(runner.actions.slice(-2), 'the workload goes once its results are recorded, its inputs with it').to.deep.equal([
      `release ${scan.id} deleted`,
      `delete collected ${scan.id}`,
    ]);
  });

  it('keeps the workload of a finished scan whose results were not recorded (unreadable output; a stop that won)', async () => {
    const unreadable = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(unreadable)!);
    runner.statuses.set(unreadable.id, {
      phase: 'Succeeded',
      outputs: [{ file: 'nmap.xml', contentType: 'application/xml', content: Buffer.from('<nmaprun><host') }],
    });
    await controller.reconcile(controller.keyOf(unreadable)!);
    expect(stateOf(unreadable.id).conditions.at(-1)).to.include({ reason: 'ResultUnreadable' });
    expect(runner.actions.at(-1), 'the workload stays: release deletes its inputs').to.equal(`release ${unreadable.id} kept`);
    const stopped = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(stopped)!);
    runner.statuses.set(stopped.id, {
      phase: 'Succeeded',
      outputs: [{ file: 'nmap.xml', contentType: 'application/xml', content: Buffer.from(nmapReport(1, 1, 127)) }],
    });
    const sinkOf = core.staging.findingSink.bind(core.staging);
    core.staging.findingSink = (scanId, key) => {
      const sink = sinkOf(scanId, key);
      return { add: (findings) => (core.scans.stop(account, scanId), sink.add(findings)) };
    };
    await controller.reconcile(controller.keyOf(stopped)!);
    expect(stateOf(stopped.id).state).to.equal('STOPPING');
    expect(runner.actions.filter((action) => action.startsWith('delete collected'))).to.deep.equal([]);
  });

  it("records a finished scan's findings from the store's staging, and leaves none staged once recorded or when a stop wins the recording", async () => {
    const staged = () => (core.db.prepare('SELECT COUNT(*) AS n FROM temp.staged_findings').get() as { n: number }).n;
    const output = { file: 'nmap.xml', contentType: 'application/xml', content: Buffer.from(nmapReport(1, 3, 127)) };
    const recorded = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(recorded)!);
    runner.statuses.set(recorded.id, { phase: 'Succeeded', outputs: [output] });
    await controller.reconcile(controller.keyOf(recorded)!);
    expect(stateOf(recorded.id).state).to.equal('SUCCEEDED');
    expect(stateOf(recorded.id).risks.newOpen).to.have.length(3);
    expect(staged()).to.equal(0);

    // The API stops the scan while its findings are being staged: the recording is refused, and what was staged goes.
    const stopped = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(stopped)!);
    runner.statuses.set(stopped.id, { phase: 'Succeeded', outputs: [output] });
    const sinkOf = core.staging.findingSink.bind(core.staging);
    let stagedWhileCollecting = 0;
    core.staging.findingSink = (scanId, key) => {
      const sink = sinkOf(scanId, key);
      return {
        add: (findings) => {
          core.scans.stop(account, scanId);
          sink.add(findings);
          stagedWhileCollecting = staged();
        },
      };
    };
    await controller.reconcile(controller.keyOf(stopped)!);
    expect(stagedWhileCollecting).to.equal(3);
    expect(stateOf(stopped.id).state).to.equal('STOPPING');
    expect(stateOf(stopped.id).risks.newOpen).to.deep.equal([]);
    expect(staged()).to.equal(0);
  });

  it('keeps an output of up to RESULT_IN_ROW_MAX_BYTES in its result row, and a larger or streamed one in a file, each served the same', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    const atBound = Buffer.concat([Buffer.from('<nmaprun/>'), Buffer.alloc(RESULT_IN_ROW_MAX_BYTES - 10, 0x20)]);
    const overBound = Buffer.concat([Buffer.from('<nmaprun/>'), Buffer.alloc(RESULT_IN_ROW_MAX_BYTES + 1 - 10, 0x20)]);
    const streamed = Buffer.from('<nmaprun/>\n');
    runner.statuses.set(scan.id, {
      phase: 'Succeeded',
      outputs: [
        { file: 'nmap.xml', contentType: 'application/xml', content: atBound },
        { file: 'over.xml', contentType: 'application/xml', content: overBound },
        {
          file: 'streamed.xml',
          contentType: 'application/xml',
          content: async function* () {
            yield streamed;
          },
        },
      ],
    });
    await controller.reconcile(controller.keyOf(scan)!);
    const done = stateOf(scan.id);
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    const served = new Map<string, { inRow: boolean; onDisk: boolean; bytes: Buffer; size: number }>();
    for (const result of done.results) {
      const { file, content } = await core.scans.openResult(account, result.resultId);
      const chunks: Buffer[] = [];
      for await (const chunk of content) chunks.push(Buffer.from(chunk as Uint8Array));
      served.set(file.fileName, {
        inRow: core.scanRepository.resultContent(result.resultId) !== undefined,
        onDisk: (await core.resultFiles.read(scan.id, file.fileName)) !== undefined,
        bytes: Buffer.concat(chunks),
        size: file.size,
      });
    }
    expect(served.get('nmap.xml')).to.deep.include({ inRow: true, onDisk: false, size: RESULT_IN_ROW_MAX_BYTES });
    expect(served.get('nmap.xml')!.bytes.equals(atBound)).to.equal(true);
    expect(served.get('over.xml')).to.deep.include({ inRow: false, onDisk: true, size: RESULT_IN_ROW_MAX_BYTES + 1 });
    expect(served.get('over.xml')!.bytes.equals(overBound)).to.equal(true);
    expect(served.get('streamed.xml')).to.deep.include({ inRow: false, onDisk: true, size: streamed.length });
    expect(served.get('streamed.xml')!.bytes.equals(streamed)).to.equal(true);
  });

  it("with the store's group commit, the writes of scans reconciled in the same turn share one transaction (one disk flush): their RUNNING, then their SUCCEEDED", async () => {
    let transactions = 0;
    const commits = new GroupCommit(
      (fn) => {
        if (!core.db.inTransaction) transactions += 1;
        return core.db.transaction(fn).immediate();
      },
      () => core.db.inTransaction,
    );
    build(10, { commit: (work) => commits.run(work) });
    const scans = [startScan(['127.0.0.1']), startScan(['127.0.0.2']), startScan(['127.0.0.3'])];
    await Promise.all(scans.map((scan) => controller.reconcile(controller.keyOf(scan)!)));
    expect(scans.map((scan) => stateOf(scan.id).state)).to.deep.equal(['RUNNING', 'RUNNING', 'RUNNING']);
    expect(transactions).to.equal(1);
    // No output files: saving them would wait on the disk, so the three would no longer finish in the same turn.
    for (const scan of scans) runner.statuses.set(scan.id, { phase: 'Succeeded', outputs: [] });
    await Promise.all(scans.map((scan) => controller.reconcile(controller.keyOf(scan)!)));
    expect(scans.map((scan) => stateOf(scan.id).state)).to.deep.equal(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(transactions).to.equal(2);
    expect(eventTypes().filter((type) => type === 'scan.updated:SUCCEEDED')).to.have.length(3);
  });

  it('a scan is RUNNING only once its write is committed: the reconcile waits for the commit', async () => {
    const held: Array<() => void> = [];
    build(10, { commit: <T>(work: () => T) => new Promise<T>((resolve) => held.push(() => resolve(work()))) });
    const scan = startScan(['127.0.0.1']);
    let done = false;
    const admitting = controller.reconcile(controller.keyOf(scan)!).then(() => (done = true));
    for (let turn = 0; turn < 1000 && held.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(runner.actions).to.deep.equal([`start ${scan.id} 127.0.0.1`]);
    expect([stateOf(scan.id).state, done]).to.deep.equal(['QUEUED', false]);
    held[0]!();
    await admitting;
    expect(stateOf(scan.id).state).to.equal('RUNNING');
  });

  it('a scan whose RUNNING is written holds one slot, not two, while its reconcile waits for the shared commit: a slot freed meanwhile wakes the next scan', async () => {
    // Writes are applied at once but their reconciles resume only when the test says (a commit shared with others, still being flushed).
    const held = new Map<string, () => void>();
    let writing = '';
    build(2, {
      commit: <T>(work: () => T) => {
        const value = work();
        return new Promise<T>((resolve) => held.set(writing, () => resolve(value)));
      },
    });
    const resume = async (id: string) => {
      for (let turn = 0; turn < 1000 && !held.has(id); turn++) await new Promise((resolve) => setImmediate(resolve));
      held.get(id)!();
      held.delete(id);
    };
    const first = startScan(['127.0.0.1']);
    writing = first.id;
    const admitFirst = controller.reconcile(controller.keyOf(first)!);
    await resume(first.id);
    await admitFirst;
    const second = startScan(['127.0.0.2']);
    const third = startScan(['127.0.0.3']);
    writing = second.id;
    const admitSecond = controller.reconcile(controller.keyOf(second)!);
    for (let turn = 0; turn < 1000 && !held.has(second.id); turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(stateOf(second.id).state).to.equal('RUNNING');
    // The first finishes while the second's reconcile still waits for its commit.
    runner.statuses.set(first.id, { phase: 'Succeeded', outputs: [] });
    const queued = recordQueued(controller);
    writing = first.id;
    const finishFirst = controller.reconcile(controller.keyOf(first)!);
    await resume(first.id);
    await finishFirst;
    expect(stateOf(first.id).state).to.equal('SUCCEEDED');
    expect(queued).to.deep.equal([controller.keyOf(third)]);
    await resume(second.id);
    await admitSecond;
  });

  for (const [what, status, reason] of [
    ['a scanner that exits non-zero', { phase: 'Failed', reason: 'ScannerExited', message: 'nmap exited with code 1' }, 'ScannerExited'],
    ['a scanner that is not installed', { phase: 'Failed', reason: 'ScannerNotInstalled', message: 'nuclei is not installed' }, 'ScannerNotInstalled'],
    ['a workload lost in a restart', { phase: 'Missing' }, 'WorkloadLost'],
  ] as const) {
    it(`fails the scan with a condition saying why for ${what}`, async () => {
      const scan = startScan(['127.0.0.1']);
      await controller.reconcile(controller.keyOf(scan)!);
      runner.statuses.set(scan.id, status as WorkloadStatus);
      await controller.reconcile(controller.keyOf(scan)!);
      const failed = stateOf(scan.id);
      expect(failed.state).to.equal('FAILED');
      expect(failed.conditions.at(-1)).to.include({ type: 'Failed', reason });
      expect(failed.finishedAt).to.be.a('string');
    });
  }

  it('stops the workload of a STOPPING scan and then marks it STOPPED', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.stop(account, scan.id).state).to.equal('STOPPING');
    await controller.reconcile(controller.keyOf(scan)!);
    expect(runner.actions.slice(-2), 'the stopped workload took its inputs').to.deep.equal([`stop ${scan.id}`, `release ${scan.id} deleted`]);
    expect(stateOf(scan.id).state).to.equal('STOPPED');
  });

  it('does not overwrite a stop that arrives while the workload reports progress', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    const slowRunner = runner;
    const originalObserve = slowRunner.observe.bind(slowRunner);
    slowRunner.observe = async (id) => {
      core.scans.stop(account, id); // the API stops it while the controller waits for the runner
      return { ...(await originalObserve(id)), progress: 50 };
    };
    await controller.reconcile(controller.keyOf(scan)!);
    expect(stateOf(scan.id).state).to.equal('STOPPING');
  });

  it('adopts unfinished scans at start: a RUNNING scan whose workload is unknown fails as lost', async () => {
    const scan = startScan(['127.0.0.1']);
    await controller.reconcile(controller.keyOf(scan)!);
    runner.statuses.clear(); // a new process: the runner knows nothing
    build();
    controller.start();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    await controller.stop();
    expect(stateOf(scan.id).state).to.equal('FAILED');
    expect(stateOf(scan.id).conditions.at(-1)).to.include({ reason: 'WorkloadLost' });
  });
});

/** The keys enqueued on the controller's work queue from now on, in order (they are still queued). */
function recordQueued(controller: { queue: { add(key: string): void; addFirst(key: string): void } }): string[] {
  const queued: string[] = [];
  for (const method of ['add', 'addFirst'] as const) {
    const original = controller.queue[method].bind(controller.queue);
    controller.queue[method] = (key: string) => {
      queued.push(key);
      original(key);
    };
  }
  return queued;
}
