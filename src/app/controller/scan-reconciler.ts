/**
 * The Scan reconciler (DESIGN.md: one reconciler per Kind, the record and
 * its faces), the same in both runtimes. One work queue key per Scan,
 * `namespace/name`, and one reconcile(key) that:
 *
 * 1. reads the record (the row) and, through the runtime's face
 *    (faces.ts), receives the object: a deletion, a Scan applied with
 *    kubectl adopted, a custom resource made for a row without one,
 *    RecordMissing (Kubernetes: scan-face.ts; embedded: no face);
 * 2. converges the workload by the row's state: a QUEUED scan admitted
 *    under the concurrency limit, its targets resolved and checked, its
 *    workload started; a RUNNING one followed, its results collected and
 *    recorded; a STOPPING one stopped;
 * 3. projects the row once, as it is after those writes (Kubernetes: the
 *    custom resource's status, its Events, and its expiry once finished).
 *
 * Every row write here is followed by the projection in the same pass, so
 * nothing needs telling; writes from elsewhere (the API, a schedule's run)
 * enqueue the key through the services' change hooks, the runner's notices
 * enqueue their scan, and the face's informer its objects.
 */
import { createHash, randomUUID } from 'node:crypto';
import { presentScan } from '../present/scan.js';
import type { Clock } from '../../domain/clock.js';
import { newEvent } from '../../domain/events/event.js';
import { classifyResolution, hostOf, type AddressRefusal, type Resolution } from '../../domain/scans/resolve-targets.js';
import { SCAN_STATES, advanceProgress, type ResolvedTarget, type Scan, type SkippedTarget } from '../../domain/scans/scan.js';
import { setCondition, setConditions, type ConditionChange } from '../../domain/conditions/condition.js';
import type { Cidr } from '../../domain/targets/ipv4.js';
import {
  LOGIN_FAILED_REASON,
  WorkloadRefusedError,
  type HostResolver,
  type RecordingStaging,
  type ResultFileStore,
  type NewResultFile,
  type ScanRepository,
  type WorkloadRunner,
  type WorkloadStatus,
} from '../ports.js';
import type { Timers } from './timer.js';
import { collectFindings, type CollectedFindings } from '../collector.js';
import { dropStaged, type RiskHistory, type TargetFindings } from '../risk-history.js';
import { MalformedResultError } from '../../domain/errors.js';
import { RESULT_IN_ROW_MAX_BYTES } from '../../domain/scans/result-file.js';
import type { QueueObserver, WorkQueue, ReconcileResult } from './work-queue.js';
import type { ReconcileFace } from './faces.js';
import { ObjectLoop } from './object-loop.js';
import type { AccountRepository } from '../ports.js';
import { resolveHost } from '../resolve-host.js';
import type { ScanPdfs } from '../scan-pdfs.js';
import { AUTHENTICATION_CONDITION, AUTHENTICATION_FAILED, type PreparedScan, type WebScanPreparation } from '../web-scan-preparation.js';

export interface ScanReconcilerOptions {
  /** Told what the work queue does (metrics). */
  queueObserver?: QueueObserver;
  scans: ScanRepository;
  /** The account of a key's namespace, and the namespace of a scan's account. */
  accounts: Pick<AccountRepository, 'findByNamespace' | 'findById'>;
  /** The Scan's face in this runtime (Kubernetes: its custom resource, scan-face.ts); none when not given. */
  face?: ReconcileFace<Scan>;
  runner: WorkloadRunner;
  resolver: HostResolver;
  resultFiles: ResultFileStore;
  history: RiskHistory;
  /** Where a finished scan's findings are staged as its outputs are parsed (the history records them from there). */
  staging: RecordingStaging;
  clock: Clock;
  timers: Timers;
  maxConcurrentScans: number;
  allowTargets: readonly Cidr[];
  /**
   * Web scans' inputs from their Target, and the login replay where the
   * service runs it (embedded runtime); absent, workloads start with their
   * targets only.
   */
  preparation?: WebScanPreparation;
  /**
   * Each SUCCEEDED scan's PDF: listed in its results with its final state,
   * rendered right after (ScanPdfs). Absent, a scan's results are its
   * scanner's files only.
   */
  scanPdfs?: ScanPdfs;
  /** VIGIL_RESULT_FILE_MAX_MB: the largest output file the collector parses (the JSON parsers' own default is the 25 MiB upload limit). */
  resultFileMaxBytes?: number;
  onError: (scanId: string, error: unknown) => void;
  /**
   * A host of the scan (a target's, or one its ZAP settings name) resolved to
   * a refused address: tenants read the rule only, the service's log keeps the address.
   */
  onAddressRefused?: (refusal: AddressRefusal) => void;
  /**
   * How often a running workload is polled besides the runner's own change
   * notices; null when the runner's notices are complete (Kubernetes: informer
   * caches), so a running scan costs nothing between its changes.
   */
  pollMs?: number | null;
  /**
   * When a QUEUED scan finds no free slot it is looked at again after this
   * long, as a safety net: a finishing scan wakes the next ones at once.
   */
  admissionRetryMs?: number;
  workers?: number;
  /**
   * Runs a write in a store transaction shared with the other writes of the
   * same turn of the event loop (the store's GroupCommit, shared with POST
   * /v1/scans), resolving once it is committed: one disk flush, which blocks
   * the event loop, then serves several scans' state changes. Absent, each
   * write commits on its own.
   */
  commit?: <T>(work: () => T) => Promise<T>;
}

const ACTIVE_STATES = ['QUEUED', 'RUNNING', 'STOPPING'] as const;

export class ScanReconciler {
  readonly queue: WorkQueue;
  private readonly objects: ObjectLoop<Scan>;
  /** Scans admitted whose workload start is still in progress: they hold a slot before they are RUNNING. */
  private readonly starting = new Set<string>();

  constructor(private readonly options: ScanReconcilerOptions) {
    const { scans } = options;
    this.objects = new ObjectLoop<Scan>({
      records: {
        findByName: (account, name) => scans.findByName(account.id, name),
        reread: (scan) => scans.findByIdUnscoped(scan.id),
        locate: (scan) => scan,
        listed: (all) => eachScan(scans, all ? SCAN_STATES : ACTIVE_STATES),
      },
      accounts: options.accounts,
      ...(options.face === undefined ? {} : { face: options.face }),
      converge: (scan) => this.converge(scan),
      timers: options.timers,
      onError: options.onError,
      workers: options.workers ?? 4,
      ...(options.queueObserver === undefined ? {} : { queueObserver: options.queueObserver }),
    });
    this.queue = this.objects.queue;
    // Registered with the workload's notices too: a Job, pod or process that changed names its scan.
    options.runner.onChange((scanId) => this.enqueueId(scanId));
  }

  start(): void {
    this.objects.start();
  }

  async stop(): Promise<void> {
    await this.objects.stop();
  }

  /** A Scan written or deleted outside this reconciler (the API, a schedule's run, an upload). */
  enqueue(scan: Pick<Scan, 'accountId' | 'name'>): void {
    this.objects.enqueueAt(scan);
  }

  /** The key of a scan: its account's namespace and its object name. */
  keyOf(scan: Scan): string | undefined {
    return this.objects.keyOf(scan);
  }

  reconcile(key: string): Promise<ReconcileResult> {
    return this.objects.reconcile(key);
  }

  private enqueueId(scanId: string): void {
    const scan = this.options.scans.findByIdUnscoped(scanId);
    if (scan !== undefined) this.enqueue(scan);
  }

  /** The workload of the Scan as its row says; no record (a database restored from an older backup) leaves it alone. */
  private async converge(scan: Scan): Promise<ReconcileResult> {
    switch (scan.state) {
      case 'QUEUED':
        return this.admit(scan);
      case 'RUNNING':
        return this.follow(scan);
      case 'STOPPING':
        return this.finishStopping(scan);
      default:
        return undefined;
    }
  }

  /** When to look at a running workload again: when the runner asks, else at the poll interval, else only when it says it changed. */
  private recheck(status?: WorkloadStatus): ReconcileResult {
    const pollMs = this.options.pollMs === undefined ? 2000 : this.options.pollMs;
    const delays = [status?.recheckAfterMs, pollMs ?? undefined].filter((delay): delay is number => delay !== undefined);
    return delays.length === 0 ? undefined : { requeueAfterMs: Math.min(...delays) };
  }

  private slotsInUse(): number {
    return this.options.scans.countInState('RUNNING') + this.options.scans.countInState('STOPPING') + this.starting.size;
  }

  /** Takes a slot synchronously (no await between the count and the claim), so the limit holds however many scans arrive. */
  private async admit(scan: Scan): Promise<ReconcileResult> {
    if (this.starting.has(scan.id)) return undefined;
    if (this.slotsInUse() >= this.options.maxConcurrentScans) return { requeueAfterMs: this.options.admissionRetryMs ?? 10_000 };
    this.starting.add(scan.id);
    try {
      return await this.startWorkload(scan);
    } finally {
      this.starting.delete(scan.id);
    }
  }

  private async startWorkload(queued: Scan): Promise<ReconcileResult> {
    const checked = await this.resolveTargets(queued);
    // The login replay is its own step, before the scanner (and the check that it is installed).
    const prepared = await this.prepare(queued, checked.resolved);
    for (const refusal of [...checked.refused, ...(prepared.refused ?? [])]) this.options.onAddressRefused?.(refusal);
    const resolved = prepared.ready;
    const skipped = [...checked.skipped, ...prepared.skipped];
    const scan = { ...queued, conditions: setConditions(queued.conditions, prepared.conditions, this.options.clock.now()) };
    const now = this.options.clock.now().toISOString();
    if (resolved.length === 0) {
      await this.write(
        { ...scan, skippedTargets: skipped, state: 'FAILED', finishedAt: now },
        'QUEUED',
        ended('Failed', 'NoScannableTargets', 'every target was skipped; see skipped_targets'),
      );
      return this.wakeQueued();
    }
    try {
      await this.options.runner.start(scan, resolved, prepared.inputs);
    } catch (error) {
      if (!(error instanceof WorkloadRefusedError)) throw error;
      await this.write(
        { ...scan, resolvedTargets: resolved, skippedTargets: skipped, state: 'FAILED', finishedAt: now },
        'QUEUED',
        ended('Failed', error.reason, error.message),
      );
      return this.wakeQueued();
    }
    const started = await this.write(
      { ...scan, state: 'RUNNING', resolvedTargets: resolved, skippedTargets: skipped, startedAt: now },
      'QUEUED',
      [{ type: 'WorkloadReady', status: 'True', reason: 'WorkloadStarted', message: `the ${scan.type} scanner started on ${resolved.length} target(s)` }],
      // Once RUNNING is written, the RUNNING count holds its slot: counted as starting as well, until this reconcile
      // resumes after a shared commit, the slot would count twice, and a freed slot woken meanwhile would go unused.
      () => this.starting.delete(scan.id),
    );
    if (!started) {
      // Stopped or deleted while its targets were resolved: the workload must not outlive it.
      await this.options.runner.stop(scan.id);
      await this.options.runner.release(scan.id, 'deleted');
      return this.wakeQueued();
    }
    return this.recheck();
  }

  private async prepare(scan: Scan, resolved: ResolvedTarget[]): Promise<PreparedScan> {
    if (this.options.preparation === undefined || resolved.length === 0) return { ready: resolved, skipped: [], inputs: {}, conditions: [] };
    return this.options.preparation.prepare(scan, resolved);
  }

  private async resolveTargets(scan: Scan) {
    const outcomes = await Promise.all(
      scan.requestedTargets.map(async (requested) => classifyResolution(requested, await this.resolve(hostOf(requested.target)), this.options.allowTargets)),
    );
    return {
      resolved: outcomes.flatMap((outcome) => ('resolved' in outcome ? [outcome.resolved] : [])),
      skipped: outcomes.flatMap((outcome) => ('skipped' in outcome ? [outcome.skipped] : [])),
      refused: outcomes.flatMap((outcome, index): AddressRefusal[] => {
        if (!('refusedAddress' in outcome) || outcome.refusedAddress === undefined) return [];
        const target = scan.requestedTargets[index]!.target;
        return [{ scanId: scan.id, host: hostOf(target), address: outcome.refusedAddress, reason: outcome.skipped.skippedReason }];
      }),
    };
  }

  private resolve(host: string): Promise<Resolution> {
    return resolveHost(this.options.resolver, host);
  }

  private async follow(scan: Scan): Promise<ReconcileResult> {
    const status = await this.options.runner.observe(scan.id);
    const now = this.options.clock.now().toISOString();
    switch (status.phase) {
      case 'Running': {
        const progress = advanceProgress(scan.progress, status.progress ?? 0);
        if (progress !== scan.progress) await this.write({ ...scan, progress }, 'RUNNING');
        return this.recheck(status);
      }
      case 'Succeeded': {
        const recorded = await this.complete(scan, status, now);
        // The slot is free once the final state is saved: the next scan starts while the work directory is removed.
        this.wakeQueued();
        await this.options.runner.release(scan.id, recorded ? 'deleted' : 'kept');
        // Only now, with the results in the record, may the workload go (a Job kept through an outage of Vigil).
        if (recorded) await this.options.runner.deleteCollectedWorkload(scan.id);
        return undefined;
      }
      case 'Failed':
        if (status.reason === LOGIN_FAILED_REASON) {
          await this.write(
            loginFailedInWorkload(scan, status.message ?? 'the login recording failed', now),
            'RUNNING',
            ended('Failed', 'NoScannableTargets', 'every target was skipped; see skipped_targets'),
          );
          await this.options.runner.release(scan.id, 'kept');
          return this.wakeQueued();
        }
        await this.write({ ...scan, state: 'FAILED', finishedAt: now }, 'RUNNING', failure(status));
        await this.options.runner.release(scan.id, 'kept');
        return this.wakeQueued();
      case 'Missing':
        await this.write({ ...scan, state: 'FAILED', finishedAt: now }, 'RUNNING', failure(status));
        await this.options.runner.release(scan.id, 'kept');
        return this.wakeQueued();
    }
  }

  /** Stores the results and the final state (the caller releases the workload); true when the results are recorded. */
  private async complete(scan: Scan, status: WorkloadStatus, now: string): Promise<boolean> {
    let collected: CollectedFindings;
    try {
      collected = await collectFindings(scan, status.outputs ?? [], this.options.staging, this.options.resultFileMaxBytes);
    } catch (error) {
      if (!(error instanceof MalformedResultError)) throw error;
      await this.write(
        { ...scan, state: 'FAILED', finishedAt: now },
        'RUNNING',
        ended('Failed', 'ResultUnreadable', `the scanner's output could not be read: ${error.message}`),
      );
      return false;
    }
    try {
      return await this.recordResults(scan, status, collected, now);
    } finally {
      // Recorded, refused (a stop won) or failed: nothing of this collection stays staged.
      await dropStaged(this.options.staging, scan.id);
    }
  }

  private async recordResults(scan: Scan, status: WorkloadStatus, collected: CollectedFindings, now: string): Promise<boolean> {
    const files: NewResultFile[] = [];
    for (const output of status.outputs ?? []) {
      if (output.content instanceof Uint8Array && output.content.byteLength <= RESULT_IN_ROW_MAX_BYTES) {
        // Kept in its row, written with SUCCEEDED in one transaction: as durable as the final state, with no file of its own.
        const sha256 = createHash('sha256').update(output.content).digest('hex');
        files.push({
          id: randomUUID(),
          scanId: scan.id,
          accountId: scan.accountId,
          fileName: output.file,
          contentType: output.contentType,
          size: output.content.byteLength,
          sha256,
          createdAt: now,
          content: output.content,
        });
        continue;
      }
      const content = output.content instanceof Uint8Array ? output.content : output.content();
      const { size, sha256 } = await this.options.resultFiles.save(scan.id, output.file, content);
      files.push({
        id: randomUUID(),
        scanId: scan.id,
        accountId: scan.accountId,
        fileName: output.file,
        contentType: output.contentType,
        size,
        sha256,
        createdAt: now,
      });
    }
    return this.recordCompletion(withUnscannedSkipped(scan, collected.skipped), files, collected.byTarget, now, status.detail);
  }

  /**
   * The risk history and, in the same transaction, the Scan's final state
   * with its risk lists and result files and every event; a large result a
   * few targets per transaction instead (so it never holds up other
   * requests), the Scan's state in the last. If the Scan was stopped
   * meanwhile, all of it is rolled back and the stop wins.
   */
  private async recordCompletion(
    scan: Scan,
    scannerFiles: NewResultFile[],
    findings: TargetFindings,
    now: string,
    detail: string | undefined,
  ): Promise<boolean> {
    const pdf = this.options.scanPdfs?.resultFor(scan, now);
    const files = pdf === undefined ? scannerFiles : [...scannerFiles, pdf];
    const saved = await this.options.history.recordScanWhole(
      scan,
      'SCAN',
      findings,
      {
        scan: (risks): Scan => ({
          ...scan,
          state: 'SUCCEEDED',
          progress: 100,
          finishedAt: now,
          risks,
          results: files.map((file) => ({ resultId: file.id, contentType: file.contentType })),
          conditions: setConditions(scan.conditions, applicable(scan, ended('Succeeded', 'ScannerFinished', finishedMessage(detail))), now),
        }),
        event: 'scan.updated',
        save: (done, events) => this.options.scans.saveWithResults(done, files, events, 'RUNNING'),
      },
      this.options.commit,
    );
    if (saved === false) this.enqueue(scan);
    else if (pdf !== undefined) this.options.scanPdfs!.renderSoon({ resultId: pdf.id, scanId: scan.id, accountId: scan.accountId });
    return saved !== false;
  }

  private async finishStopping(scan: Scan): Promise<ReconcileResult> {
    await this.options.runner.stop(scan.id);
    const now = this.options.clock.now().toISOString();
    await this.write({ ...scan, state: 'STOPPED', finishedAt: now }, 'STOPPING', ended('Stopped', 'StopRequested', 'the scan was stopped on request'));
    await this.options.runner.release(scan.id, 'deleted');
    return this.wakeQueued();
  }

  /**
   * A slot freed: give waiting scans their turn, oldest first, only as many
   * as there are free slots (waking every queued scan made each completion
   * cost a reconcile per waiting scan; bench/scans.ts).
   */
  private wakeQueued(): undefined {
    const free = this.options.maxConcurrentScans - this.slotsInUse();
    if (free <= 0) return undefined;
    // The oldest QUEUED scans include those being started right now (still QUEUED until RUNNING is saved): skipped, so every free slot wakes a scan
    // that can take it.
    const waiting = this.options.scans.idsInStates(['QUEUED'], free + this.starting.size).filter((id) => !this.starting.has(id));
    for (const id of waiting.slice(0, free)) this.enqueueId(id);
    return undefined;
  }

  /**
   * Saves the scan (with a new condition when given) and its scan.updated
   * event in one transaction (shared, with options.commit), only if it is still in `expectedState`
   * (`whenWritten` runs in that transaction once the row is written); when
   * the API changed it meanwhile (a stop), the scan is reconciled again.
   */
  private async write(scan: Scan, expectedState: Scan['state'], changes: readonly ConditionChange[] = [], whenWritten?: () => void): Promise<boolean> {
    const updated = changes.length === 0 ? scan : { ...scan, conditions: setConditions(scan.conditions, applicable(scan, changes), this.options.clock.now()) };
    const event = newEvent(scan.accountId, 'scan.updated', presentScan(updated), this.options.clock.now());
    const saved = await this.commit(() => {
      const written = this.options.scans.save(updated, [event], expectedState);
      if (written) whenWritten?.();
      return written;
    });
    if (!saved) this.enqueue(scan);
    return saved;
  }

  /** A write through options.commit, or on its own (synchronously, as the store writes) without it. */
  private commit<T>(work: () => T): Promise<T> {
    if (this.options.commit !== undefined) return this.options.commit(work);
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/**
 * How a Scan ended: the outcome's condition with the reason, and (when a
 * workload had started) WorkloadReady turned False, pointing at the outcome
 * rather than repeating its reason.
 */
function ended(outcome: 'Succeeded' | 'Failed' | 'Stopped', reason: string, message: string): ConditionChange[] {
  return [
    { type: 'WorkloadReady', status: 'False', reason: 'WorkloadEnded', message: `the scanner workload is no longer running; see the ${outcome} condition` },
    { type: outcome, status: 'True', reason, message },
  ];
}

/** A Scan whose workload never started gets no WorkloadReady condition at its end: only the outcome says why. */
function applicable(scan: Scan, changes: readonly ConditionChange[]): ConditionChange[] {
  const started = scan.conditions.some((condition) => condition.type === 'WorkloadReady');
  return changes.filter((change) => change.type !== 'WorkloadReady' || change.status === 'True' || started);
}

/**
 * Kubernetes: the Job's login step failed before the scanner ran. Its target
 * (a ZAP scan has one) is skipped as Authentication Failed, as in the embedded runtime.
 */
function loginFailedInWorkload(scan: Scan, message: string, now: string): Scan {
  const skipped = scan.resolvedTargets.map((target) => ({ targetId: target.targetId, skippedReason: AUTHENTICATION_FAILED }));
  const login: ConditionChange = {
    type: AUTHENTICATION_CONDITION,
    status: 'False',
    reason: 'LoginFailed',
    message: `the login recording failed in the scan's Job: ${message}`,
  };
  return {
    ...scan,
    state: 'FAILED',
    finishedAt: now,
    resolvedTargets: [],
    skippedTargets: [...scan.skippedTargets, ...skipped],
    conditions: setCondition(scan.conditions, login, now),
  };
}

/** Targets the scanner never reached move from resolved to skipped: they are not scanned, so they close nothing. */
function withUnscannedSkipped(scan: Scan, skipped: readonly SkippedTarget[]): Scan {
  if (skipped.length === 0) return scan;
  const ids = new Set(skipped.map((target) => target.targetId));
  return { ...scan, resolvedTargets: scan.resolvedTargets.filter((target) => !ids.has(target.targetId)), skippedTargets: [...scan.skippedTargets, ...skipped] };
}

function finishedMessage(detail: string | undefined): string {
  return `the scanner finished and its results are recorded${detail === undefined ? '' : `; it ran with ${detail}`}`;
}

function failure(status: WorkloadStatus): ConditionChange[] {
  if (status.phase === 'Missing') {
    return ended('Failed', 'WorkloadLost', 'the scanner process was lost (the service restarted or it was killed); start the scan again');
  }
  return ended('Failed', status.reason ?? 'ScannerFailed', status.message ?? 'the scanner failed');
}

/** The scans in these states, read one by one as a full pass reaches them. */
function* eachScan(scans: ScanRepository, states: readonly Scan['state'][]): Iterable<Scan> {
  for (const id of scans.idsInStates(states)) {
    const scan = scans.findByIdUnscoped(id);
    if (scan !== undefined) yield scan;
  }
}
