/**
 * The face of a Scan on Kubernetes (faces.ts): its custom resource, spec an
 * input and status a projection of the row, which is the record. The Scan
 * reconciler (src/app/controller/scan-reconciler.ts) asks it, once per pass
 * of a `namespace/name` key, to receive the object, then, after converging
 * the workload, to project the row. This table is the answer to "when does
 * the Scan resource show X?":
 *
 * | CR                      | row                 | receive                                  | then, after the workload  |
 * |-------------------------|---------------------|------------------------------------------|---------------------------|
 * | being deleted           | active              | stop the scan                            | once ended: delete the row, release the finalizer |
 * | being deleted           | ended or none       | delete the row, release the finalizer    | -                         |
 * | being deleted           | expired by Vigil    | release the finalizer; the record stays  | -                         |
 * | none                    | exists              | create the CR (finalizer, labels, owner) | project onto it           |
 * | none                    | expired by Vigil    | nothing: the record stays without its face | -                       |
 * | labelled                | deleted through API | delete the CR                            | -                         |
 * | with Vigil's status     | none (not deleted)  | RecordMissing: the database is older than the CR; no action | - |
 * | applied with kubectl    | none                | start the scan for the namespace's account, or refuse (Accepted=False) | project |
 * | exists                  | exists              | -                                        | project: label and finalizer if missing; status if it differs |
 * | exists                  | finished            | -                                        | the same, requeued at finish + TTL; then, or past |
 * |                         |                     |                                          | its schedule's history limits: expire (delete the |
 * |                         |                     |                                          | CR, keep the record)                              |
 *
 * Projecting the status: a QUEUED row over no status writes nothing (the
 * API lists it as QUEUED; RUNNING follows); progress alone is written only
 * within the scan's request budget (request-budget.ts); each state the CR
 * comes to show is told once as an Event. Nothing reacts to an informer
 * event directly: events, row writes and the informer's full lists only
 * enqueue keys, so a failed write or a missed event is healed by the next
 * pass (level-triggered), with the work queue's backoff between failures.
 */
import type * as k8s from './client-node.js';
import { JSON_PATCH, KubeApi } from './kube-api.js';
import type { ScansService } from '../../app/scans-service.js';
import type { FinishedScan, ScanResourceMarks } from '../../app/ports.js';
import type { FaceSink, Received, ReconcileFace } from '../../app/controller/faces.js';
import { SCANS_HISTORY_LIMITS } from '../../domain/schedules/scheduled-scan-resource.js';
import type { Account } from '../../domain/accounts/account.js';
import type { Clock } from '../../domain/clock.js';
import { conditionHolds } from '../../domain/conditions/condition.js';
import { InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION, parseScanSpec, type ScanSpec, type ScanStatus } from '../../domain/scans/scan-resource.js';
import { scanStatusOf } from '../../domain/scans/scan-status.js';
import { isTerminal, type Condition, type Scan } from '../../domain/scans/scan.js';
import type { EventRecorder } from './event-recorder.js';
import { isForbidden } from './kube-errors.js';
import { SCAN_FINALIZER, SCAN_ID_LABEL, ignoringNotFound, objectKey, releaseFinalizer, splitKey, statusShows, type CachedMetadata } from './reconciler-kit.js';
import { addFinalizerPatch, addLabelPatch } from './finalizers.js';
import { customObjectPath, writeCondition, writeRefusal } from './refusals.js';
import { scanJobName } from './job-manifest.js';
import type { ScanCustomResources } from './scan-resources.js';
import type { ReconcileResult } from '../../app/controller/work-queue.js';
import { ScanRequestBudget } from './request-budget.js';

/** A Scan CR as the informer's cache holds it. */
export interface ScanObject {
  metadata?: CachedMetadata;
  spec?: unknown;
  status?: Partial<ScanStatus> & { conditions?: Condition[] };
}

/** What the reconciler did, in order: the table tests' expected actions. */
export type ScanAction =
  | { action: 'stop'; scanId: string }
  | { action: 'deleteRow'; scanId: string }
  | { action: 'releaseFinalizer' }
  | { action: 'createObject'; scanId: string }
  | { action: 'deleteObject' }
  | { action: 'startScan'; scanId: string }
  | { action: 'refuse'; reason: string }
  | { action: 'recordMissing' }
  | { action: 'patchMetadata' }
  | { action: 'expire'; scanId: string }
  | { action: 'patchStatus' };

export interface ScanFaceOptions {
  kubeConfig: k8s.KubeConfig;
  scanResources: ScanCustomResources;
  service: ScansService;
  /** Which scans were deleted through the API (their CR goes too) and which CRs Vigil expired. */
  marks: ScanResourceMarks;
  /** The CR as the informer last saw it. */
  cached: (namespace: string, name: string) => ScanObject | undefined;
  /** Every CR the informer holds (a full pass visits each); none when not given. */
  cachedAll?: () => Iterable<ScanObject>;
  events: EventRecorder;
  clock: Clock;
  /** Told of every action taken (tests, the benchmark); optional. */
  onAction?: (key: string, action: ScanAction) => void;
  /** VIGIL_SCAN_TTL_AFTER_FINISHED: seconds a finished Scan's CR stays unless its spec says otherwise (default 7 days). */
  ttlAfterFinishedSeconds?: number;
  /** The history limits of a ScheduledScan (its CR's spec); the defaults (3 and 1) when not given. */
  historyLimitsOf?: (scheduledScanId: string) => HistoryLimits;
  /** Each scan's requests, counted by every part of the controller that sends one for it (request-budget.ts); one of its own when not given. */
  budget?: ScanRequestBudget;
}

export interface HistoryLimits {
  successful: number;
  failed: number;
}

const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;

/** resourceVersions remembered per key while the cache is behind Vigil's writes (a bound; the cache catches up within a watch event). */
const MAX_BEHIND = 16;
/** Applied Scans whose acceptance waits to be told with their Running Event, remembered at most (a bound; each is forgotten when told). */
const MAX_PENDING_ACCEPTANCES = 4096;

export class ScanResourceFace implements ReconcileFace<Scan> {
  readonly everyRow = true;
  private readonly api: KubeApi;
  private sink: FaceSink = { enqueue: () => undefined, resync: () => undefined };
  /**
   * The status last written per key, and the resourceVersions the cache may
   * still show that are older than that write: the one it was written over
   * and those earlier writes returned. The cache is a watch event (or
   * several) behind Vigil's own writes; while it shows one of these, the
   * server holds `status`, so the same status is not written again and a
   * stale cached status is not taken for the server's. Forgotten once the
   * cache shows a newer CR.
   */
  private readonly written = new Map<string, { behind: string[]; status: ScanStatus; returned: string | undefined }>();

  /** Applied Scans whose acceptance is still to be told, by key: with their Running Event when they start in the same pass (one Event, not two). */
  private readonly pendingAcceptances = new Map<string, { scanId: string; message: string }>();
  /**
   * The resourceVersion each label-and-finalizer patch was sent over, by key:
   * while the cache still shows that version it is behind the patch, which
   * is not sent again (a second request for the same change). Forgotten once
   * the cache shows a newer CR.
   */
  private readonly metadataPatched = new Map<string, string>();
  private readonly budget: ScanRequestBudget;

  constructor(private readonly options: ScanFaceOptions) {
    this.api = new KubeApi(options.kubeConfig);
    this.budget = options.budget ?? new ScanRequestBudget();
  }

  watch(sink: FaceSink): void {
    this.sink = sink;
  }

  /** The informer's event on a CR: its key is reconciled. */
  changed(object: ScanObject): void {
    this.sink.enqueue(objectKey(object.metadata!.namespace!, object.metadata!.name!));
  }

  /** The informer listed every CR again (start, restart): a full pass. */
  listed(): void {
    this.sink.resync();
  }

  *keys(): Iterable<string> {
    for (const object of this.options.cachedAll?.() ?? []) yield objectKey(object.metadata!.namespace!, object.metadata!.name!);
  }

  async receive(key: string, account: Account | undefined, row: Scan | undefined): Promise<Received<Scan>> {
    const [namespace, name] = splitKey(key);
    const object = this.options.cached(namespace, name);
    if (object !== undefined) this.options.scanResources.shown(namespace, name);
    if (account === undefined) return done(await this.unbound(key, object));
    if (object?.metadata?.deletionTimestamp !== undefined) return this.deleting(key, account, object, row);
    if (object === undefined) {
      this.written.delete(key);
      this.pendingAcceptances.delete(key);
      this.metadataPatched.delete(key);
      // A record whose face Vigil expired stays without it.
      if (row === undefined || this.options.marks.isExpired(row.id)) return done(undefined);
      const created = await this.createObject(key, account, row);
      return { row, project: (latest) => (created === undefined ? Promise.resolve(undefined) : this.projectOrExpire(key, created, latest)) };
    }
    if (row === undefined) return this.withoutRecord(key, account, object);
    return { row, project: (latest) => this.projectOrExpire(key, object, latest) };
  }

  /** The row on the CR; a finished one until its time is up. */
  private projectOrExpire(key: string, object: ScanObject, row: Scan): Promise<ReconcileResult> {
    if (!isTerminal(row.state) || row.finishedAt === null) return this.project(key, object, row);
    return this.finished(key, object, row, row.finishedAt);
  }

  /**
   * A finished scan's CR shows its end until its time is up (finish + its
   * spec's ttlSecondsAfterFinished, else the install's), or until newer
   * Scans of its schedule push it past the history limits: then it is
   * expired. Until then the key is requeued for that time, not polled; a
   * time that passed while Vigil was down is met at the start-up resync.
   */
  private async finished(key: string, object: ScanObject, row: Scan, finishedAt: string): Promise<ReconcileResult> {
    const now = this.options.clock.now().getTime();
    const expiresAt = Date.parse(finishedAt) + this.ttlSecondsOf(object) * 1000;
    const pastHistory = this.pastHistoryLimits(row);
    const expiresNow = expiresAt <= now || pastHistory.some((scan) => scan.id === row.id);
    if (expiresNow) await this.expire(key, object, row);
    else await this.project(key, object, row);
    // Newer Scans of the schedule pushed these out: their CRs go now rather than at their own TTL.
    const namespace = object.metadata!.namespace!;
    for (const older of pastHistory.filter((scan) => scan.id !== row.id)) {
      const cached = this.options.cached(namespace, older.name);
      if (cached === undefined) this.options.marks.markExpired(older.id, new Date(now).toISOString());
      else await this.expire(objectKey(namespace, older.name), cached, older);
    }
    return expiresNow ? undefined : { requeueAfterMs: expiresAt - now };
  }

  private ttlSecondsOf(object: ScanObject): number {
    const fromSpec = (object.spec as { ttlSecondsAfterFinished?: unknown } | undefined)?.ttlSecondsAfterFinished;
    return typeof fromSpec === 'number' && fromSpec >= 0 ? fromSpec : (this.options.ttlAfterFinishedSeconds ?? DEFAULT_TTL_SECONDS);
  }

  /** The finished Scans of the row's schedule past its history limits (SUCCEEDED ones, and those that did not succeed, each counted newest first). */
  private pastHistoryLimits(row: Scan): FinishedScan[] {
    if (row.scheduledBy === null) return [];
    const limits = this.options.historyLimitsOf?.(row.scheduledBy) ?? { successful: SCANS_HISTORY_LIMITS.successful, failed: SCANS_HISTORY_LIMITS.failed };
    const finished = this.options.marks.finishedWithResources(row.scheduledBy);
    const succeeded = finished.filter((scan) => scan.state === 'SUCCEEDED');
    const unsuccessful = finished.filter((scan) => scan.state !== 'SUCCEEDED');
    return [...succeeded.slice(limits.successful), ...unsuccessful.slice(limits.failed)];
  }

  /** Vigil's own expiry: marked first (so the CR is not created again and its deletion keeps the record), then released and deleted. */
  private async expire(key: string, object: ScanObject, row: Pick<Scan, 'id'>): Promise<void> {
    this.act(key, { action: 'expire', scanId: row.id });
    this.options.marks.markExpired(row.id, this.options.clock.now().toISOString());
    this.written.delete(key);
    this.metadataPatched.delete(key);
    await releaseFinalizer(this.api, this.path(object), object.metadata, SCAN_FINALIZER);
    await ignoringNotFound(() => this.api.delete(this.path(object), { propagationPolicy: 'Background' }));
  }

  /**
   * No account owns the namespace: nothing runs and nothing is written
   * (another install may own it; the informers watch only bound namespaces,
   * so such a CR is seen only if it was cached under a binding), but a
   * deletion is let through.
   */
  private async unbound(key: string, object: ScanObject | undefined): Promise<void> {
    if (object?.metadata?.deletionTimestamp !== undefined) return this.releaseFinalizer(key, object);
  }

  /**
   * `kubectl delete scan`: the scan stops first (the workload is stopped in
   * this pass); once it ended, its row goes and the CR is released.
   */
  private async deleting(key: string, account: Account, object: ScanObject, row: Scan | undefined): Promise<Received<Scan>> {
    // Vigil's own expiry (released already, unless that patch failed): the record stays.
    if (row !== undefined && this.options.marks.isExpired(row.id)) return done(await this.releaseFinalizer(key, object));
    if (row === undefined || isTerminal(row.state)) return done(await this.deleteRowAndRelease(key, account, object, row));
    let stopping = row;
    if (row.state !== 'STOPPING') {
      this.act(key, { action: 'stop', scanId: row.id });
      stopping = this.options.service.stop(account, row.id);
      this.budget.spend(row.id);
      this.options.events.normal(object, 'Stopping', 'the Scan is being deleted: its scanner is stopped first');
    }
    return { row: stopping, project: async (latest) => (isTerminal(latest.state) ? this.deleteRowAndRelease(key, account, object, latest) : undefined) };
  }

  private async deleteRowAndRelease(key: string, account: Account, object: ScanObject, row: Scan | undefined): Promise<void> {
    this.pendingAcceptances.delete(key);
    this.metadataPatched.delete(key);
    if (row !== undefined) {
      this.budget.drop(row.id);
      this.act(key, { action: 'deleteRow', scanId: row.id });
      try {
        await this.options.service.delete(account, row.id);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    await this.releaseFinalizer(key, object);
    const linkedId = object.metadata?.labels?.[SCAN_ID_LABEL];
    if (linkedId !== undefined) this.options.marks.forgetDeletion(linkedId);
  }

  private async releaseFinalizer(key: string, object: ScanObject): Promise<void> {
    if (object.metadata?.finalizers?.includes(SCAN_FINALIZER) === true) this.act(key, { action: 'releaseFinalizer' });
    await releaseFinalizer(this.api, this.path(object), object.metadata, SCAN_FINALIZER);
  }

  /** A row without its face: created through the API (or the CR was lost); the pass projects onto the CR as created. */
  private async createObject(key: string, account: Account, row: Scan): Promise<ScanObject | undefined> {
    this.act(key, { action: 'createObject', scanId: row.id });
    try {
      return await this.options.scanResources.create(row, account.namespace);
    } catch (error) {
      // A namespace missing from the chart's tenants: no retry fixes RBAC, and the scan fails with NamespaceNotWritable anyway.
      if (!isForbidden(error)) throw error;
      return undefined;
    }
  }

  /**
   * A CR whose scan has no row: deleted through the API (the CR goes too),
   * or the database was restored from a backup older than the CR, which
   * then shows Vigil's status: neither it nor its Job is deleted or run
   * again (RecordMissing). Without status it is a new `kubectl apply`.
   */
  private async withoutRecord(key: string, account: Account, object: ScanObject): Promise<Received<Scan>> {
    const linkedId = object.metadata?.labels?.[SCAN_ID_LABEL];
    if (linkedId !== undefined && this.options.marks.deletedThroughApi(linkedId)) {
      await this.deleteObject(key, object);
      this.options.marks.forgetDeletion(linkedId);
      return done(undefined);
    }
    if (object.status?.scanId !== undefined || object.status?.state !== undefined) return done(await this.recordMissing(key, object));
    return this.adopt(key, account, object);
  }

  private async recordMissing(key: string, object: ScanObject): Promise<void> {
    const message = `Vigil has no record of scan ${object.status?.scanId ?? object.metadata?.labels?.[SCAN_ID_LABEL] ?? '(unknown)'}: its database is older than this resource (restored from a backup?). Vigil leaves it and its Job alone; delete it with kubectl delete scan (then apply it again to run a new scan)`;
    const change = { type: 'RecordMissing', status: 'True', reason: 'NoRecord', message } as const;
    if (conditionHolds(object.status?.conditions, change)) return;
    this.act(key, { action: 'recordMissing' });
    this.options.events.warning(object, 'RecordMissing', message);
    await ignoringNotFound(() => writeCondition(this.api, this.path(object, 'status'), object, change, this.options.clock.now()));
  }

  /** Deleted through the API: the CR goes too, and its children with it (owner references). */
  private async deleteObject(key: string, object: ScanObject): Promise<void> {
    this.act(key, { action: 'deleteObject' });
    await this.releaseFinalizer(key, object);
    await ignoringNotFound(() => this.api.delete(this.path(object), { propagationPolicy: 'Background' }));
  }

  /**
   * Applied with kubectl in a bound namespace: started exactly as one
   * created through the API, and converged in this pass. Its acceptance is
   * told with its Running Event when it starts now, else on its own.
   */
  private async adopt(key: string, account: Account, object: ScanObject): Promise<Received<Scan>> {
    let spec: ScanSpec;
    try {
      spec = parseScanSpec(object.spec);
    } catch (error) {
      return done(await this.refuseInvalid(key, object, 'InvalidSpec', error));
    }
    let started: Scan;
    try {
      [started] = this.options.service.start(account, requestOf(spec), spec.scheduledBy ?? null, object.metadata!.name!) as [Scan];
    } catch (error) {
      return done(await this.refuseInvalid(key, object, 'Rejected', error));
    }
    this.act(key, { action: 'startScan', scanId: started.id });
    this.pendingAcceptances.set(key, { scanId: started.id, message: `Vigil started ${started.type} scan ${started.id} for account ${account.name}` });
    if (this.pendingAcceptances.size > MAX_PENDING_ACCEPTANCES) this.pendingAcceptances.delete(this.pendingAcceptances.keys().next().value!);
    return { row: started, project: (latest) => this.projectOrExpire(key, object, latest) };
  }

  /**
   * Label and finalizer when missing (one patch), then the status when it
   * differs from the row's (one patch); progress alone only when the scan's
   * request budget has room for it (request-budget.ts).
   */
  private async project(key: string, object: ScanObject, row: Scan): Promise<ReconcileResult> {
    const labels = object.metadata?.labels ?? {};
    const finalizers = object.metadata?.finalizers ?? [];
    const version = object.metadata?.resourceVersion;
    const patchedOver = this.metadataPatched.get(key);
    /** The version the label-and-finalizer patch made, when this pass sent it: older than the status written after it. */
    let metadataVersion: string | undefined;
    if (patchedOver !== undefined && patchedOver !== version) this.metadataPatched.delete(key);
    if ((labels[SCAN_ID_LABEL] !== row.id || !finalizers.includes(SCAN_FINALIZER)) && (patchedOver === undefined || patchedOver !== version)) {
      this.act(key, { action: 'patchMetadata' });
      if (version !== undefined) this.metadataPatched.set(key, version);
      this.budget.spend(row.id);
      try {
        const patch = [
          ...(labels[SCAN_ID_LABEL] === row.id ? [] : addLabelPatch(object.metadata?.labels, SCAN_ID_LABEL, row.id)),
          ...(finalizers.includes(SCAN_FINALIZER) ? [] : addFinalizerPatch(object.metadata?.finalizers, SCAN_FINALIZER)),
        ];
        metadataVersion = (await this.api.patch<ScanObject | undefined>(this.path(object), patch, JSON_PATCH))?.metadata?.resourceVersion;
      } catch (error) {
        // Outside the tenants Vigil may only write status (cluster-wide): the CR shows why its scan failed, unlabelled.
        if (!isForbidden(error)) {
          this.metadataPatched.delete(key); // not applied (as far as Vigil knows): the next pass sends it again
          throw error;
        }
      }
    }
    // An applied Scan that waits for a slot: its acceptance is told now, on its own.
    this.tellWaitingAcceptance(key, object, row);
    const desired = projectedStatus(row, object.metadata?.generation);
    const resourceVersion = object.metadata?.resourceVersion;
    const last = this.written.get(key);
    const cacheBehind = last !== undefined && resourceVersion !== undefined && last.behind.includes(resourceVersion);
    if (!cacheBehind) this.written.delete(key);
    // What the server holds as far as Vigil knows: its own last write while the cache is behind it.
    const shown = cacheBehind ? last.status : object.status;
    // A scan waiting for a slot: its CR has no status until the scan leaves QUEUED (one write fewer; the API lists it
    // as QUEUED). A CR showing another state is put right.
    if (row.state === 'QUEUED' && shown?.state === undefined) return;
    const now = this.options.clock.now().getTime();
    if (statusShowsRow(shown, desired)) {
      if (isTerminal(row.state)) this.budget.drop(row.id);
      if (row.state !== 'RUNNING' || shown?.progress === desired.progress) return;
      // Progress alone: within the budget, once per step, not within 10 s of the last status write.
      const decision = this.budget.progressWrite(row.id, desired.progress ?? 0, now);
      if (decision === 'never') return;
      if (decision !== 'write') return { requeueAfterMs: decision };
    }
    // Written once, the latest: a row that moved on while the key waited is written as it is now, not step by step.
    this.act(key, { action: 'patchStatus' });
    this.budget.spend(row.id);
    let returned: string | undefined;
    await ignoringNotFound(async () => {
      const patched = await this.api.patch<ScanObject | undefined>(this.path(object, 'status'), { status: desired });
      returned = patched?.metadata?.resourceVersion;
    });
    const earlier = [resourceVersion, metadataVersion].filter((version): version is string => version !== undefined);
    const behind = [...(cacheBehind ? [...last.behind, ...(last.returned === undefined ? [] : [last.returned])] : []), ...earlier].slice(-MAX_BEHIND);
    this.written.set(key, { behind, status: desired, returned });
    this.budget.statusWritten(row.id, desired.progress, now);
    const before = shown?.state;
    if (before !== row.state) this.stateEvents(key, object, row, before);
    // The scan ended: its count goes (the deletion of its Secret, still to come, was reserved).
    if (isTerminal(row.state)) this.budget.drop(row.id);
    return undefined;
  }

  private tellWaitingAcceptance(key: string, object: ScanObject, row: Scan): void {
    const pending = this.pendingAcceptances.get(key);
    if (pending === undefined || pending.scanId !== row.id || row.state !== 'QUEUED') return;
    this.pendingAcceptances.delete(key);
    this.event(row, () => this.options.events.normal(object, 'Accepted', pending.message));
  }

  /**
   * The state the CR now shows, as an Event (`kubectl describe scan`): once
   * per transition the CR shows. A scan whose CR never showed RUNNING (it
   * ended before its status was first written) still tells that its Job ran.
   */
  private stateEvents(key: string, object: ScanObject, row: Scan, before: string | undefined): void {
    const pending = this.pendingAcceptances.get(key);
    const accepted = pending?.scanId === row.id ? pending.message : undefined;
    if (pending !== undefined && (accepted === undefined || row.state !== 'QUEUED')) this.pendingAcceptances.delete(key);
    const runs = row.state === 'RUNNING' || (isTerminal(row.state) && before !== 'RUNNING' && row.startedAt !== null);
    // An applied Scan that ended before it started (no scannable target, a refused Job): its acceptance is told on its own.
    if (accepted !== undefined && !runs && row.state !== 'QUEUED') this.event(row, () => this.options.events.normal(object, 'Accepted', accepted));
    if (isTerminal(row.state) && runs) this.stateEvent(object, { ...row, state: 'RUNNING' }, accepted);
    this.stateEvent(object, row, accepted);
  }

  /** One Event of the scan, counted against its budget. */
  private event(row: Scan, record: () => void): void {
    this.budget.spend(row.id);
    record();
  }

  private stateEvent(object: ScanObject, row: Scan, accepted?: string): void {
    const events = this.options.events;
    const why = (type: string) => row.conditions.find((condition) => condition.type === type);
    const record = (write: () => void) => this.event(row, write);
    switch (row.state) {
      case 'RUNNING': {
        // The Job's creation and the scan's start are one moment (the start creates the Job): one Event tells both,
        // and for a Scan applied with kubectl and started at once, its acceptance too.
        const ready = why('WorkloadReady');
        const created = `created Job ${scanJobName(object.metadata!.name!)}: ${ready?.status === 'True' ? ready.message : `the ${row.type} scanner started`}`;
        return record(() => events.normal(object, 'Running', accepted === undefined ? created : `accepted and started (${accepted}); ${created}`));
      }
      case 'SUCCEEDED':
        return record(() =>
          events.normal(
            object,
            'Succeeded',
            `${why('Succeeded')?.message ?? 'the scan succeeded'}: ${row.risks.newOpen.length} new, ${row.risks.stillOpen.length} still open, ${row.risks.closed.length} closed`,
          ),
        );
      case 'FAILED': {
        const failed = why('Failed');
        return record(() => events.warning(object, failed?.reason ?? 'Failed', failed?.message ?? 'the scan failed'));
      }
      case 'STOPPED':
        return record(() => events.normal(object, 'Stopped', why('Stopped')?.message ?? 'the scan was stopped'));
      case 'OVER_LIMIT':
        return record(() => events.warning(object, 'OverLimit', why('Admitted')?.message ?? "the account's monthly scan limit is reached"));
      default:
        return undefined;
    }
  }

  private async refuseInvalid(key: string, object: ScanObject, reason: string, error: unknown): Promise<void> {
    if (!(error instanceof InvalidRequestError)) throw error;
    await this.refuse(key, object, reason, error.message);
  }

  /** `Accepted=False` with what to change; written once per reason and message. */
  private async refuse(key: string, object: ScanObject, reason: string, message: string, withEvent = true): Promise<void> {
    if (conditionHolds(object.status?.conditions, { type: 'Accepted', status: 'False', reason, message })) return;
    this.act(key, { action: 'refuse', reason });
    if (withEvent) this.options.events.warning(object, reason, message);
    await writeRefusal(this.api, this.path(object, 'status'), object, { reason, message }, this.options.clock.now());
  }

  private act(key: string, action: ScanAction): void {
    this.options.onAction?.(key, action);
  }

  private path(object: ScanObject, subresource?: string): string {
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return customObjectPath({ group: SCAN_GROUP, version: SCAN_VERSION, plural: SCAN_PLURAL, namespace, name }, subresource);
  }
}

/** The row as the CR's status shows it. */
export function projectedStatus(row: Scan, generation: number | undefined): ScanStatus {
  return { ...scanStatusOf(row), ...(generation === undefined ? {} : { observedGeneration: generation }) };
}

/**
 * Whether the CR's status already shows every field of the desired one, a
 * running scan's progress aside: progress rides along with the writes that
 * happen anyway (RUNNING, a condition that changes, the end), and is written
 * on its own only within the scan's request budget (request-budget.ts), so
 * a scan's requests do not grow with its duration or its progress lines
 * (issue 13: at most 10 a scan). The API and the dashboard show progress as
 * it moves.
 */
function statusShowsRow(current: ScanObject['status'], desired: ScanStatus): boolean {
  return statusShows(current, desired, (field) => field === 'progress' && desired.state === 'RUNNING');
}

function done(result: ReconcileResult): Received<Scan> {
  return { done: result };
}

function requestOf(spec: ScanSpec) {
  return { type: spec.type, targets: spec.targets, target_ids: spec.targetIds, tags: spec.tags, use_authentication: spec.useAuthentication };
}
