/**
 * The risk history (SPEC.md Risk status; DESIGN.md 7): what a finished scan
 * adds to it, and what deleting a scan takes away. Both run in one store
 * transaction together with the scan's own write and the events they cause.
 */
import { presentRisk } from './present/risk.js';
import { presentScan, scanJsonInPieces } from './present/scan.js';
import type { Clock } from '../domain/clock.js';
import { timeOrderedUuid } from '../domain/time-ordered-uuid.js';
import { newEvent, type OutboxEvent } from '../domain/events/event.js';
import { asScanType, type Finding, type ScanType } from '../domain/risks/finding.js';
import { diffScan, historyOf, type Risk, type StagedFinding } from '../domain/risks/risk.js';
import type { Scan } from '../domain/scans/scan.js';
import { healthScore } from '../domain/targets/health-score.js';
import type { Target } from '../domain/targets/target.js';
import { yieldToEventLoop } from './event-loop.js';
import type {
  EventReceivers,
  PendingForgets,
  PendingRecording,
  PendingRecordings,
  RecordingKind,
  RecordingStaging,
  RiskRepository,
  ScanSweeps,
  TargetRepository,
} from './ports.js';

export interface ScanRisks {
  newOpen: string[];
  stillOpen: string[];
  closed: string[];
}

/**
 * The findings of each target a recording covers, by target id, as staged in
 * the store (RecordingStaging): an upload's and a finished scan's as they
 * were parsed (ImportsService, the collector), or findings a caller holds in
 * memory (a Map by target id) staged when the recording starts.
 * The history reads back their order and fingerprints only; the store copies
 * their definitions into the risks they become.
 */
export interface TargetFindings {
  findingsOf(targetId: string): readonly StagedFinding[];
  countOf(targetId: string): number;
}

type FindingsInput = ReadonlyMap<string, readonly Finding[]> | TargetFindings;

/**
 * How a recording ends: the Scan it stores, the event that announces it, and
 * the write that stores the Scan in the recording's last transaction.
 */
export interface ScanCompletion<T> {
  /** The Scan as the recording's last transaction stores it, given its risk lists and the Scan recorded (as handed to the recording). */
  scan(risks: ScanRisks, recorded: Scan): Scan;
  /** Its event's type (scan.created for an import, scan.updated for a scan that finished); the data is the Scan as the API presents it. */
  event: 'scan.created' | 'scan.updated';
  /**
   * Stores the Scan with `events` (its event, unless a chunked recording
   * holds it already) in the recording's last transaction; false when the
   * Scan changed meanwhile (it was stopped), which rolls the recording back.
   */
  save(scan: Scan, events: readonly OutboxEvent[]): T | false;
}

/**
 * The size of each part of a held scan event's data (RecordingStaging.addEventPart), in characters: about 512 KiB, so
 * that the 2.1 MB event of a 40,020-risk upload takes five transactions.
 */
const EVENT_PART_CHARS = 512 * 1024;

export class RiskHistory {
  constructor(
    private readonly risks: RiskRepository,
    private readonly targets: TargetRepository,
    private readonly clock: Clock,
    private readonly pending: PendingRecordings,
    private readonly receivers: EventReceivers,
    private readonly staging: RecordingStaging,
    private readonly forgets: PendingForgets,
    private readonly sweeps: ScanSweeps,
    private readonly limits: RecordingLimits = { transactionMs: TRANSACTION_MS },
  ) {}

  private findingsObserver: ((scanType: ScanType, count: number) => void) | undefined;

  /** Told how many findings each recording reads for each target (metrics); a recording rolled back was still read. */
  observeFindings(observer: (scanType: ScanType, count: number) => void): void {
    this.findingsObserver = observer;
  }

  /** Runs fn in the store's transaction (the caller adds the scan's own write). */
  transaction<T>(fn: () => T): T {
    return this.risks.transaction(fn);
  }

  /**
   * Records what the scan found on each target it covered and returns the
   * scan's risk lists; its risk events (only when the account has a webhook
   * endpoint) are staged, for the caller's last transaction to release
   * (RecordingStaging.releaseEvents) or drop. Skipped targets are not
   * covered, so they close nothing. Call inside transaction().
   */
  recordScan(scan: Scan, findingsByTarget: FindingsInput): ScanRisks {
    return this.recordStaged(scan, this.stage(scan, findingsByTarget), false);
  }

  /** `journaled`: a chunked recording, whose changes to targets go in its journal for a rollback to undo. */
  private recordStaged(scan: Scan, source: TargetFindings, journaled: boolean): ScanRisks {
    return this.recordStagedFrom(scan, source, journaled, 0, () => false).lists;
  }

  /**
   * Records the scan's targets from position `from`, in the caller's
   * transaction, until they are all done or `full` (given the targets and
   * findings recorded so far) says the transaction holds enough; returns
   * their risk lists and the position to go on from.
   */
  private recordStagedFrom(
    scan: Scan,
    source: TargetFindings,
    journaled: boolean,
    from: number,
    full: (targets: number, findings: number) => boolean,
  ): { lists: ScanRisks; next: number } {
    const lists: ScanRisks = { newOpen: [], stillOpen: [], closed: [] };
    const now = this.clock.now();
    const at = now.toISOString();
    // No endpoint to receive them: the risk events are not even made (the outbox would not store them). A chunked
    // recording's go to the outbox held back (holdRiskEvents), a whole one's are staged for its transaction's end.
    const events: EventSink | undefined = !this.receivers.receivesEvents(scan.accountId, now)
      ? undefined
      : journaled
        ? (rows, createdAt) => this.staging.holdRiskEvents(scan.id, createdAt, rows)
        : (rows, createdAt) => this.staging.stageRiskEvents(scan.id, createdAt, rows);
    let next = from;
    let findings = 0;
    while (next < scan.resolvedTargets.length) {
      const target = this.targets.findById(scan.accountId, scan.resolvedTargets[next++]!.targetId);
      if (target === undefined) continue; // deleted while the scan ran
      const staged = source.findingsOf(target.id);
      findings += staged.length;
      this.risks.recordCoverage(scan.id, target.id, scan.type, at);
      this.recordTarget(scan, target, staged, at, lists, events);
      this.refreshTarget(target, at, journaled ? scan.id : undefined);
      if (full(next - from, findings)) break;
    }
    return { lists, next };
  }

  /**
   * Findings held in memory (a Map by target id) go to the staging under
   * their target ids, so that every recording takes the same path; an
   * upload's and a finished scan's are staged already, as they were parsed.
   */
  private stage(scan: Scan, input: FindingsInput): TargetFindings {
    if (!(input instanceof Map)) return input as TargetFindings;
    const map = input as ReadonlyMap<string, readonly Finding[]>;
    for (const [targetId, findings] of map) {
      this.staging.findingSink(scan.id, targetId).add(findings.map((finding) => asScanType(finding, scan.type)));
    }
    return { findingsOf: (targetId) => this.staging.findings(scan.id, [targetId]), countOf: (targetId) => map.get(targetId)?.length ?? 0 };
  }

  /**
   * One read of the target's risks (ids, fingerprints and states: no
   * definitions), the domain's diff, then set-based writes: the new risks and
   * the re-detected ones take their definitions from the staged findings in
   * the store, the closed ones change state, the detections go in one call
   * (bench/ingest.ts: reading 45,000 findings back into objects and writing
   * them out again was most of a large upload).
   * Lists and events keep their order: new risks first, then the existing
   * ones in the order they were created. Each event presents its risk as
   * written, made in the store from the row (RecordingStaging.stageRiskEvents).
   */
  private recordTarget(scan: Scan, target: Target, staged: readonly StagedFinding[], at: string, lists: ScanRisks, events: EventSink | undefined): void {
    const existing = this.risks.keysOf(target.id, scan.type);
    if (staged.length > 0) this.findingsObserver?.(scan.type, staged.length);
    const seqOf = firstOfEachFingerprint(staged);
    const diff = diffScan(existing, new Set(seqOf.keys()));
    const created: Array<[number, string, string]> = [];
    const detected: string[] = [];
    for (const fingerprint of diff.newFingerprints) {
      // Time-ordered (UUID v7): a recording's new risks go to the end of the id
      // and detection indexes instead of to pages all over them, each of which
      // a chunk's commit then wrote again (bench/ingest.ts).
      const id = timeOrderedUuid(this.clock.now());
      created.push([seqOf.get(fingerprint)!, id, target.id]);
      detected.push(id);
      lists.newOpen.push(id);
    }
    this.risks.insertStaged(scan.accountId, scan.type, at, created);
    this.risks.redetectStaged(
      at,
      diff.stillOpen.map((risk) => [seqOf.get(risk.fingerprint)!, risk.id] as const),
    );
    for (const risk of diff.stillOpen) {
      detected.push(risk.id);
      lists.stillOpen.push(risk.id);
    }
    this.risks.close(diff.closed.map((risk) => risk.id));
    for (const risk of diff.closed) lists.closed.push(risk.id);
    this.risks.recordDetections(scan.id, detected);
    if (events === undefined) return;
    const now = this.clock.now();
    const riskEvents: RiskEventRow[] = created.map(([, id]) => [id, timeOrderedUuid(now), 'risk.created']);
    const changed = new Set([...diff.stillOpen, ...diff.closed].map((risk) => risk.id));
    for (const risk of existing) if (changed.has(risk.id)) riskEvents.push([risk.id, timeOrderedUuid(now), 'risk.updated']);
    events(riskEvents, now.toISOString());
  }

  /**
   * recordScan() for a large scan: a few targets per transaction with a turn
   * of the event loop between them, so that it never holds up other requests
   * (issue 16), under a pending marker that a crash leaves for start-up to
   * roll back. Each chunk writes its events to the outbox, held back from
   * delivery while the marker lasts (RecordingStaging.holdRiskEvents; moving
   * 40,020 staged ones in the last transaction held the event loop 708 ms,
   * bench/scale.ts), so none goes out for a recording that is rolled back
   * (its rollback deletes them) and none before the last transaction; the
   * Scan's own event follows them, held too, in parts (holdScanEvent). The
   * last transaction runs `completion.save` with the Scan made from its risk
   * lists; when that returns false or throws, everything this recording
   * wrote is rolled back. The risk lists (ids only) are the one thing held
   * to the end, for the Scan and its event; each chunk stores its own
   * entries of them (RiskRepository.appendRiskLists), so the save's write of
   * the lists (ScanRepository.saveWithResults) only stores their lengths,
   * which show them (bench/scale.ts: writing 40,020 entries there took 59 ms
   * of the last transaction). The caller drops the staged findings
   * afterwards (dropStaged), as it does for a refused one.
   */
  async recordScanInChunks<T>(scan: Scan, kind: RecordingKind, findingsByTarget: FindingsInput, completion: ScanCompletion<T>): Promise<T | false> {
    this.pending.begin(scan.id, scan.accountId, kind, this.clock.now().toISOString());
    try {
      const source = this.stage(scan, findingsByTarget);
      // A turn before the first chunk: the caller's own writes (an upload's Scan row and its findings' counts) came in this one.
      await yieldToEventLoop();
      const risks: ScanRisks = { newOpen: [], stillOpen: [], closed: [] };
      for (let next = 0; next < scan.resolvedTargets.length;) {
        this.transaction(() => {
          const started = performance.now();
          const part = this.recordStagedFrom(
            scan,
            source,
            true,
            next,
            (targets, findings) =>
              targets >= TARGETS_PER_TRANSACTION || findings >= FINDINGS_PER_TRANSACTION || performance.now() - started >= this.limits.transactionMs,
          );
          next = part.next;
          // The chunk's entries of the scan's lists, after the earlier chunks' (hidden until the save stores the lists' lengths).
          this.risks.appendRiskLists(scan.id, part.lists, { newOpen: risks.newOpen.length, stillOpen: risks.stillOpen.length, closed: risks.closed.length });
          for (const list of ['newOpen', 'stillOpen', 'closed'] as const) for (const id of part.lists[list]) risks[list].push(id);
        });
        await yieldToEventLoop();
      }
      const recorded = completion.scan(risks, scan);
      await this.holdScanEvent(recorded, completion.event);
      // The staged findings stay, for the caller to drop in turns (dropStaged): deleting 40,000 here took 27 ms of this last transaction.
      const result = this.transaction(() => {
        const done = completion.save(recorded, []);
        if (done !== false) {
          this.staging.releaseEvents(scan.id);
          this.pending.end(scan.id);
        }
        return done;
      });
      if (result === false) this.rollBack(scan.accountId, scan.id);
      return result;
    } catch (error) {
      this.rollBack(scan.accountId, scan.id);
      throw error;
    }
  }

  /**
   * recordScanInChunks() for any size: a recording that fits one transaction
   * (a scan's usual size: up to TARGETS_PER_TRANSACTION targets and
   * FINDINGS_PER_TRANSACTION findings) is written with its save and its
   * Scan event in a single transaction, one durable commit, with no pending
   * marker (a crash leaves nothing of it to roll back) and rolled back by
   * SQLite itself when the save returns false or throws; a larger one goes in chunks
   * (bench/scans.ts: the marker and a chunk were two more disk flushes per scan).
   */
  async recordScanWhole<T>(
    scan: Scan,
    kind: RecordingKind,
    findingsByTarget: FindingsInput,
    completion: ScanCompletion<T>,
    shared?: <R>(work: () => R) => Promise<R>,
  ): Promise<T | false> {
    const countOf =
      findingsByTarget instanceof Map
        ? (targetId: string) => findingsByTarget.get(targetId)?.length ?? 0
        : (targetId: string) => (findingsByTarget as TargetFindings).countOf(targetId);
    const findings = scan.resolvedTargets.reduce((sum, target) => sum + countOf(target.targetId), 0);
    if (scan.resolvedTargets.length > TARGETS_PER_TRANSACTION || findings >= FINDINGS_PER_TRANSACTION)
      return this.recordScanInChunks(scan, kind, findingsByTarget, completion);
    const whole = (): T | false => {
      try {
        return this.transaction(() => {
          const recorded = completion.scan(this.recordScan(scan, findingsByTarget), scan);
          const done = completion.save(recorded, [newEvent(recorded.accountId, completion.event, presentScan(recorded), this.clock.now())]);
          if (done === false) throw REFUSED;
          // After the caller's own writes (its scan event first), as a chunked recording's.
          this.staging.releaseEvents(scan.id);
          this.staging.drop(scan.id);
          return done;
        });
      } catch (error) {
        if (error === REFUSED) return false;
        throw error;
      }
    };
    // `shared` (the store's group commit): the transaction nests in one shared with other writes of the same turn, one disk flush for all.
    return shared === undefined ? whole() : shared(whole);
  }

  /**
   * A chunked recording's scan event, held back as its risk events are, and
   * written before its last transaction: the row, then its data (the Scan's
   * JSON, every risk id in it) in parts of EVENT_PART_CHARS, a transaction
   * each with turns of the event loop between them. Written whole in the
   * last transaction, the 2.1 MB event of a 40,020-risk upload held the
   * loop 42-56 ms (bench/scale.ts). Nothing when no endpoint would receive it.
   */
  private async holdScanEvent(scan: Scan, type: ScanCompletion<unknown>['event']): Promise<void> {
    const event = newEvent(scan.accountId, type, undefined, this.clock.now());
    const seq = this.transaction(() => this.staging.holdEvent(scan.id, event));
    if (seq === undefined) return;
    let part = '';
    const add = (text: string) => this.transaction(() => this.staging.addEventPart(seq, text));
    for await (const piece of scanJsonInPieces(scan)) {
      part += piece;
      if (part.length >= (this.limits.eventPartChars ?? EVENT_PART_CHARS)) {
        add(part);
        part = '';
      }
    }
    if (part !== '') add(part);
  }

  /**
   * Undoes what a recording wrote: the scan's coverage, detections and risk list entries go and
   * the risks they touched are recomputed from what remains; the targets it
   * created go (unless another scan covers them meanwhile) and those it
   * changed get their fields back (its journal, PendingRecordings.noteTarget).
   * No events: the recording's own were only staged, and are dropped, so
   * nothing announced is taken back.
   */
  rollBack(accountId: string, scanId: string): void {
    this.transaction(() => {
      this.staging.drop(scanId);
      this.staging.discardHeldEvents(accountId, scanId);
      const covered = this.risks.coveredBy(scanId);
      this.risks.forgetCoverage(scanId);
      this.forgetScan(accountId, covered);
      for (const created of this.pending.restoreTargets(scanId)) this.targets.deleteCascade(accountId, created);
      this.pending.end(scanId);
    });
  }

  /** Start-up: rolls back every recording a crash cut short and says which they were. */
  rollBackInterrupted(): PendingRecording[] {
    const interrupted = this.pending.list();
    for (const recording of interrupted) this.rollBack(recording.accountId, recording.scanId);
    return interrupted;
  }

  /** Recomputes every risk of the pairs from the detections that remain; a risk no scan detected any more goes away. */
  forgetScan(accountId: string, pairs: ReadonlyArray<{ targetId: string; scanType: ScanType }>): OutboxEvent[] {
    const events: OutboxEvent[] = [];
    for (const pair of pairs) this.forgetPair(accountId, pair, events);
    return events;
  }

  /**
   * Deleting a scan, in the caller's transaction with the scan's own delete
   * (which journals its rows for the sweep): the pairs it covered are
   * journaled for forgetDeletedScan() to recompute.
   * Call before the scan's row goes (its coverage goes with it).
   */
  journalForget(accountId: string, scanId: string): void {
    this.forgets.add(scanId, accountId, this.risks.coveredBy(scanId));
  }

  /**
   * What a deleted scan left, a transaction at a time with a turn of the
   * event loop before each: a scan of 40,000 risks held the loop for seconds
   * in one transaction (bench/scale.ts). First its rows are swept
   * (sweepDeletedScan); then the recompute it left (journalForget), a few
   * targets per transaction: each chunk takes its pairs off the journal in
   * its own transaction and hands its risk events to `append` there. A crash
   * leaves exactly the rows and pairs still to do, which start-up finishes
   * (finishInterruptedForgets): the deletion is never left half-done.
   * Meanwhile the risks of pairs not yet recomputed still show the deleted
   * scan's detections.
   */
  async forgetDeletedScan(scanId: string, append: (events: OutboxEvent[]) => void): Promise<void> {
    await this.sweepDeletedScan(scanId);
    await this.inTurns(() => this.forgetChunk(scanId, append));
  }

  /**
   * A deleted scan's detections and risk lists, ROWS_PER_SWEEP a transaction
   * (ScanSweeps: its row no longer takes them in a cascade, which held the
   * loop); no read reaches them once its row and coverage are gone.
   */
  async sweepDeletedScan(scanId: string): Promise<void> {
    await this.inTurns(() => this.sweeps.sweep(scanId, ROWS_PER_SWEEP));
  }

  /** Start-up: finishes the sweep and the recompute of every scan deletion a crash cut short; returns their scan ids. */
  finishInterruptedForgets(append: (events: OutboxEvent[]) => void): string[] {
    const swept = this.sweeps.scans();
    for (const scanId of swept) this.untilDone(() => this.sweeps.sweep(scanId, ROWS_PER_SWEEP));
    const recomputed = this.forgets.scans();
    for (const scanId of recomputed) this.untilDone(() => this.forgetChunk(scanId, append));
    return [...new Set([...swept, ...recomputed])];
  }

  /** Runs `chunk` in a transaction of its own, after a turn of the event loop, until it returns false. */
  private async inTurns(chunk: () => boolean): Promise<void> {
    do await yieldToEventLoop();
    while (this.transaction(chunk));
  }

  /** inTurns() without the turns: nothing else runs yet at start-up. */
  private untilDone(chunk: () => boolean): void {
    while (this.transaction(chunk));
  }

  /** One transaction of forgetDeletedScan(): journaled pairs until about RISKS_PER_RECOMPUTE risks or TRANSACTION_MS; false when none was left. */
  private forgetChunk(scanId: string, append: (events: OutboxEvent[]) => void): boolean {
    const pending = this.forgets.next(scanId, TARGETS_PER_TRANSACTION);
    if (pending.length === 0) return false;
    const events: OutboxEvent[] = [];
    const done: number[] = [];
    const started = performance.now();
    let risks = 0;
    for (const pair of pending) {
      risks += this.forgetPair(pair.accountId, pair, events);
      done.push(pair.seq);
      // As a recording's chunk: after the pair that reaches the count or the time (a pair of 100 risks took 10-25 ms among a million).
      if (risks >= RISKS_PER_RECOMPUTE || performance.now() - started >= this.limits.transactionMs) break;
    }
    this.forgets.remove(done);
    append(events);
    return true;
  }

  /** forgetScan() for one pair; returns how many risks it recomputed. */
  private forgetPair(accountId: string, { targetId, scanType }: { targetId: string; scanType: ScanType }, events: OutboxEvent[]): number {
    const target = this.targets.findById(accountId, targetId);
    if (target === undefined) return 0;
    const coverage = this.risks.coverageOf(targetId, scanType);
    const risks = this.risks.risksOf(targetId, scanType);
    for (const risk of risks) {
      const history = historyOf(risk.fingerprint, coverage);
      if (history === undefined) {
        this.risks.delete(risk.id);
      } else if (history.status !== risk.status || history.firstDetectedAt !== risk.firstDetectedAt || history.lastDetectedAt !== risk.lastDetectedAt) {
        const updated = { ...risk, ...history };
        this.risks.updateHistory(updated);
        events.push(this.event('risk.updated', updated, target));
      }
    }
    this.refreshTarget(target, undefined);
    return risks.length;
  }

  /** Accepting and un-accepting (CONTRACT.md): one acceptance entry per accept, a risk.updated event each time. */
  setAccepted(risk: Risk, target: Target, note: string | undefined): OutboxEvent {
    const at = this.clock.now().toISOString();
    const updated: Risk =
      note === undefined
        ? { ...risk, isAccepted: false }
        : { ...risk, isAccepted: true, acceptedBy: [...risk.acceptedBy, { note, created_at: at, last_updated_at: at }] };
    this.risks.update(updated);
    this.refreshTarget(target, undefined);
    return this.event('risk.updated', updated, target);
  }

  /**
   * The target's health from its open, unaccepted risks, and its last scan
   * time when a scan covered it; journaled for the recording `journalOf` when
   * one is in progress, in this transaction.
   */
  private refreshTarget(target: Target, scannedAt: string | undefined, journalOf?: string): void {
    const current = this.targets.findById(target.accountId, target.id) ?? target;
    const refreshed = { ...current, healthScore: healthScore(this.risks.openCounts(target.id)), lastScannedAt: scannedAt ?? current.lastScannedAt };
    if (journalOf !== undefined) this.pending.noteTarget(journalOf, current, refreshed);
    this.targets.refresh(refreshed);
  }

  private event(type: 'risk.created' | 'risk.updated', risk: Risk, target: Target): OutboxEvent {
    return newEvent(risk.accountId, type, presentRisk({ ...risk, target: target.target, targetLabel: target.label, tags: target.tags }), this.clock.now());
  }
}

/**
 * Drops what is staged for a recording in a turn of the event loop of its
 * own: the only recording staged (the usual case) at once, as SQLite frees a
 * table's pages without deleting row by row (20-25 ms for the 45,158
 * findings of a 25 MB upload, bench/ingest.ts; a recording stages at most
 * MAX_FINDINGS_PER_SCAN, 50,000); with others staged, a piece at a time, a
 * turn before each. Nothing staged outlives the process, so a crash
 * meanwhile leaves nothing behind.
 */
export async function dropStaged(staging: RecordingStaging, scanId: string): Promise<void> {
  do await yieldToEventLoop();
  while (staging.dropSome(scanId, STAGED_ROWS_PER_DROP));
}

/** A risk event to stage: the risk's id, the event's id and its type. */
type RiskEventRow = [riskId: string, eventId: string, type: 'risk.created' | 'risk.updated'];
/** Where a target's risk events go: staged for the recording's last transaction, or held in the outbox (a chunked recording). */
type EventSink = (rows: RiskEventRow[], createdAt: string) => void;

/** Thrown inside recordScanWhole()'s transaction to roll it back when the save refuses. */
const REFUSED = Symbol('recording refused');

/** How many targets, and about how many findings, one transaction of a recording writes at most. */
const TARGETS_PER_TRANSACTION = 250;
const FINDINGS_PER_TRANSACTION = 1000;
/**
 * And for about how long: a chunk ends after the target that reaches it.
 * On a fresh account 1,000 findings take a few milliseconds; on one with a
 * million risks each re-detected risk rewrites its entries in 13 indexes
 * and the overview's counters (about 0.15 ms), and 1,000 held the event
 * loop for 150 ms (bench/scale.ts). Time, not a smaller count, so that
 * small accounts keep their few large commits (bench/ingest.ts); 15 ms
 * leaves room for the commit's own write and flush in the same turn.
 */
export const TRANSACTION_MS = 15;

/** Bounds of a recording's transactions, and of a deleted scan's recompute (tests set a smaller time to see the chunks). */
export interface RecordingLimits {
  transactionMs: number;
  /** The size of each part of a held scan event's data (EVENT_PART_CHARS unless given: tests make it small). */
  eventPartChars?: number;
}
/**
 * About how many risks one transaction of a deleted scan's recompute reads
 * and rewrites or deletes: each write touches the risks' 13 indexes and the
 * overview's counter triggers, about 0.15 ms on a million-risk account, so
 * 1,000 held the loop 105-300 ms; about 300 took 32-62 ms (50-60 ms turns
 * with the commit and its events), and the whole
 * deletion no longer (bench/scale.ts). A pair is never split. A chunk also
 * ends after the pair that reaches TRANSACTION_MS: two pairs of 100 took
 * up to 68 ms with the commit's flush.
 */
const RISKS_PER_RECOMPUTE = 150;
/**
 * A deleted scan's detections or risk list entries one transaction of its
 * sweep deletes (7-14 ms for 5,000 detections among a million).
 */
const ROWS_PER_SWEEP = 5000;
/**
 * The staged findings one turn of dropStaged() deletes while other
 * recordings are staged: each row holds a finding's whole definition, and
 * 5,000 took 26-40 ms a turn after a 40,020-finding upload (traced,
 * bench/scale.ts's re-scan).
 */
const STAGED_ROWS_PER_DROP = 2000;

/** One finding per fingerprint on a target, the first in the scanner's order: its staged seq by fingerprint. */
function firstOfEachFingerprint(staged: readonly StagedFinding[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const finding of staged) if (!first.has(finding.fingerprint)) first.set(finding.fingerprint, finding.seq);
  return first;
}
