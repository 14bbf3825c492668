/**
 * The face of a ScheduledScan on Kubernetes (faces.ts), as for Scans
 * (scan-face.ts): the SQLite row is the record, the CR's spec an input and
 * its status a projection. The ScheduledScan reconciler
 * (src/app/controller/scheduled-scan-reconciler.ts) asks it, once per pass of
 * a `namespace/name` key, to receive the object, then, after the schedule's
 * run when due, to project the row:
 *
 * | CR                        | row    | receive                                                       | then              |
 * |---------------------------|--------|---------------------------------------------------------------|-------------------|
 * | being deleted             | exists | delete the row (the schedule stops), release the finalizer    | -                 |
 * | being deleted             | none   | release the finalizer                                         | -                 |
 * | none                      | exists | create the CR (spec, id label, finalizer)                     | its status        |
 * | linked, deleted by the API| none   | release, delete the CR (Orphan)                               | -                 |
 * | linked, not deleted       | none   | RecordMissing: the database is older than the CR; no action   | -                 |
 * | applied with kubectl      | none   | create the schedule for the namespace's account, or refuse    | its status        |
 * | new generation            | exists | update the row from the spec, or refuse and keep the row as is | its status       |
 * | row changed through API   | exists | replace the CR's spec with the row's                          | its status        |
 * | exists                    | exists | add the finalizer if missing                                  | status if it differs |
 *
 * "New generation" is a `metadata.generation` above the one the status says
 * it observed: kubectl changed the spec. An observed spec that differs from
 * the row means the row changed through the API, unless the status refuses
 * that spec: a refusal lives in the CR's own status (Accepted=False for the
 * generation it observed), so a restart keeps it, and only a change of the
 * row through the API (rowWritten, the one hint kept in memory) replaces a
 * refused spec.
 */
import { isDeepStrictEqual } from 'node:util';
import type * as k8s from './client-node.js';
import type { ScanResourceMarks, ScheduledScanRepository } from '../../app/ports.js';
import type { FaceSink, Received, ReconcileFace } from '../../app/controller/faces.js';
import type { ReconcileResult } from '../../app/controller/work-queue.js';
import type { ScheduledScan } from '../../domain/schedules/scheduled-scan.js';
import type { ScheduledScansService } from '../../app/scheduled-scans-service.js';
import type { Account } from '../../domain/accounts/account.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import type { Condition } from '../../domain/scans/scan.js';
import {
  SCHEDULED_SCAN_API_VERSION,
  SCHEDULED_SCAN_GROUP,
  SCHEDULED_SCAN_KIND,
  SCHEDULED_SCAN_PLURAL,
  SCHEDULED_SCAN_VERSION,
  ScheduledScanSpecSchema,
  parseScheduledScanSpec,
} from '../../domain/schedules/scheduled-scan-resource.js';
import type { EventRecorder } from './event-recorder.js';
import { addFinalizerPatch } from './finalizers.js';
import {
  MANAGED_BY_LABEL,
  SCHEDULED_SCAN_FINALIZER,
  SCHEDULED_SCAN_ID_LABEL,
  ignoringNotFound,
  objectKey,
  releaseFinalizer,
  splitKey,
  statusShows,
  type CachedMetadata,
} from './reconciler-kit.js';
import type { OwnerReference } from './job-manifest.js';
import { createOrRead, isNotFound, statusCodeOf } from './kube-errors.js';
import { customObjectPath, writeCondition, writeRefusal } from './refusals.js';
import { conditionHolds } from '../../domain/conditions/condition.js';
import { JSON_PATCH, KubeApi, kubePaths } from './kube-api.js';
import {
  scheduledScanInputOf,
  scheduledScanSpecOf,
  scheduledScanStatusOf,
  specMatchesRow,
  type Refusal,
  type ScheduledScanStatusPatch,
} from './scheduled-scan-object.js';

/** A ScheduledScan CR as the informer's cache holds it. */
export interface ScheduledScanObject {
  metadata?: CachedMetadata;
  spec?: unknown;
  status?: { scheduledScanId?: string; observedGeneration?: number; nextRun?: string; lastRan?: string; conditions?: Condition[] };
}

/** What the reconciler did, in order: the table tests' expected actions. */
export type ScheduledScanAction =
  | { action: 'deleteRow'; scheduledScanId: string }
  | { action: 'releaseFinalizer' }
  | { action: 'createObject'; scheduledScanId: string }
  | { action: 'deleteObject' }
  | { action: 'createRow'; scheduledScanId: string }
  | { action: 'updateRow'; scheduledScanId: string }
  | { action: 'refuse'; reason: string }
  | { action: 'recordMissing' }
  | { action: 'replaceSpec' }
  | { action: 'addFinalizer' }
  | { action: 'patchStatus' };

export interface ScheduledScanFaceOptions {
  kubeConfig: k8s.KubeConfig;
  /** The namespace of an account, for the CR of a row. */
  namespaceOf: (accountId: string) => string | undefined;
  service: ScheduledScansService;
  repository: Pick<ScheduledScanRepository, 'findByObjectName' | 'findByIdUnscoped'>;
  /** Which schedules were deleted through the API: only their CRs are deleted after them. */
  marks: Pick<ScanResourceMarks, 'deletedThroughApi' | 'forgetDeletion'>;
  /** The CR as the informer last saw it. */
  cached: (namespace: string, name: string) => ScheduledScanObject | undefined;
  /** Every CR the informer holds (a full pass visits each); none when not given. */
  cachedAll?: () => Iterable<ScheduledScanObject>;
  events: EventRecorder;
  clock: Clock;
  /** Told of every action taken (tests); optional. */
  onAction?: (key: string, action: ScheduledScanAction) => void;
}

/** What this process last wrote to a CR (by uid): the cache is a watch event behind its own writes. */
interface Written {
  uid: string;
  observedGeneration: number | undefined;
  status: ScheduledScanStatusPatch | undefined;
}

export class ScheduledScanResourceFace implements ReconcileFace<ScheduledScan> {
  readonly everyRow = true;
  private readonly api: KubeApi;
  private sink: FaceSink = { enqueue: () => undefined, resync: () => undefined };
  private readonly written = new Map<string, Written>();
  /** Keys whose row's configuration changed through the API since their last pass: the CR's spec follows the row. */
  private readonly rowSpecChanged = new Set<string>();

  constructor(private readonly options: ScheduledScanFaceOptions) {
    this.api = new KubeApi(options.kubeConfig);
  }

  watch(sink: FaceSink): void {
    this.sink = sink;
  }

  /** The informer's event on a CR: its key is reconciled. */
  changed(object: ScheduledScanObject): void {
    this.sink.enqueue(objectKey(object.metadata!.namespace!, object.metadata!.name!));
  }

  /** The informer listed every CR again (start, restart): a full pass. */
  listed(): void {
    this.sink.resync();
  }

  *keys(): Iterable<string> {
    for (const object of this.options.cachedAll?.() ?? []) yield objectKey(object.metadata!.namespace!, object.metadata!.name!);
  }

  /** The CR as the informer holds it (a Scan's lifetime reads its schedule's history limits there). */
  readonly cachedObject = (namespace: string, name: string): ScheduledScanObject | undefined => this.options.cached(namespace, name);

  /** The API wrote the row of this key; `spec` when its configuration (not only its runs) may have changed. */
  rowWritten(key: string, spec: boolean): void {
    if (spec) this.rowSpecChanged.add(key);
  }

  async receive(key: string, account: Account | undefined, row: ScheduledScan | undefined): Promise<Received<ScheduledScan>> {
    const pushSpec = this.rowSpecChanged.delete(key);
    try {
      return await this.converge(key, account, row, pushSpec);
    } catch (error) {
      if (pushSpec) this.rowSpecChanged.add(key); // the next pass still owes the CR the row's spec
      throw error;
    }
  }

  private async converge(key: string, account: Account | undefined, row: ScheduledScan | undefined, pushSpec: boolean): Promise<Received<ScheduledScan>> {
    const [namespace, name] = splitKey(key);
    const object = this.options.cached(namespace, name);
    if (account === undefined) return done(await this.unbound(key, object));
    if (object?.metadata?.deletionTimestamp !== undefined) return done(await this.deleting(key, account, object, row));
    if (object === undefined) {
      this.written.delete(key);
      return row === undefined ? done(undefined) : this.createObject(key, account, row, namespace, pushSpec);
    }
    if (row === undefined) {
      const linkedId = object.metadata?.labels?.[SCHEDULED_SCAN_ID_LABEL] ?? object.status?.scheduledScanId;
      if (linkedId !== undefined && this.options.repository.findByIdUnscoped(linkedId) === undefined)
        return done(await this.withoutRecord(key, object, linkedId));
      return this.adopt(key, account, object);
    }
    return this.follow(key, account, object, row, pushSpec);
  }

  /** No account owns the namespace: nothing is scheduled and nothing written (as for Scans, scan-reconciler.ts), but a deletion is let through. */
  private async unbound(key: string, object: ScheduledScanObject | undefined): Promise<void> {
    if (object?.metadata?.deletionTimestamp !== undefined) return this.releaseFinalizer(key, object);
  }

  /** `kubectl delete scheduledscan` (now or while Vigil was down): the schedule goes, then the CR is released. */
  private async deleting(key: string, account: Account, object: ScheduledScanObject, row: ScheduledScan | undefined): Promise<void> {
    if (row !== undefined) {
      this.act(key, { action: 'deleteRow', scheduledScanId: row.id });
      try {
        this.options.service.delete(account, row.id);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    await this.releaseFinalizer(key, object);
  }

  private async releaseFinalizer(key: string, object: ScheduledScanObject): Promise<void> {
    this.written.delete(key);
    if (object.metadata?.finalizers?.includes(SCHEDULED_SCAN_FINALIZER) === true) this.act(key, { action: 'releaseFinalizer' });
    await releaseFinalizer(this.api, customObjectPath(this.ref(object)), object.metadata, SCHEDULED_SCAN_FINALIZER);
  }

  /** A row without its face: created through the API (or the CR was lost). Created with the row's spec, then its status. */
  private async createObject(key: string, account: Account, row: ScheduledScan, namespace: string, pushSpec: boolean): Promise<Received<ScheduledScan>> {
    this.act(key, { action: 'createObject', scheduledScanId: row.id });
    const metadata = {
      name: row.objectName,
      namespace,
      labels: { [SCHEDULED_SCAN_ID_LABEL]: row.id, [MANAGED_BY_LABEL]: 'vigil' },
      finalizers: [SCHEDULED_SCAN_FINALIZER],
    };
    const body = { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND, metadata, spec: scheduledScanSpecOf(row) };
    const location = { namespace, name: row.objectName };
    let created = false;
    const object = await createOrRead(
      async () => {
        const collection = this.collection(namespace);
        const answer = await this.api.create<ScheduledScanObject>(
          kubePaths.namespaced(collection.group, collection.version, namespace, collection.plural),
          body,
        );
        created = true;
        return answer;
      },
      () => this.api.get<ScheduledScanObject>(customObjectPath(this.refOf(location))),
    );
    if (created) return { row, project: (latest) => this.writeStatus(key, object, latest, undefined, object.metadata?.generation) };
    // It existed and the cache is behind: the CR as read is compared now, rather than when the cache shows it.
    return object.metadata?.deletionTimestamp === undefined ? this.follow(key, account, object, row, pushSpec) : done(undefined);
  }

  /**
   * A CR linked to a schedule that has no row: deleted through the API (the
   * CR goes too), or the database was restored from a backup older than the
   * CR: then it is not deleted, and gets RecordMissing (as a Scan does).
   */
  private async withoutRecord(key: string, object: ScheduledScanObject, linkedId: string): Promise<void> {
    if (this.options.marks.deletedThroughApi(linkedId)) {
      await this.deleteObject(key, object);
      this.options.marks.forgetDeletion(linkedId);
      return;
    }
    const message = `Vigil has no record of scheduled scan ${linkedId}: its database is older than this resource (restored from a backup?). Vigil leaves it alone and runs nothing for it; delete it with kubectl delete scheduledscan (then apply it again to make a new schedule)`;
    const change = { type: 'RecordMissing', status: 'True', reason: 'NoRecord', message } as const;
    if (conditionHolds(object.status?.conditions, change)) return;
    this.act(key, { action: 'recordMissing' });
    this.options.events.warning(object, 'RecordMissing', message);
    await ignoringNotFound(() => writeCondition(this.api, customObjectPath(this.ref(object), 'status'), object, change, this.options.clock.now()));
  }

  /** Deleted through the API: the CR goes too; the Scans of earlier runs are kept, as their rows are (Orphan). */
  private async deleteObject(key: string, object: ScheduledScanObject): Promise<void> {
    this.act(key, { action: 'deleteObject' });
    await this.releaseFinalizer(key, object);
    await ignoringNotFound(() => this.api.delete(customObjectPath(this.ref(object)), { propagationPolicy: 'Orphan' }));
  }

  /** Applied with kubectl in a bound namespace: a new schedule, made as one created through the API, or refused with why. */
  private async adopt(key: string, account: Account, object: ScheduledScanObject): Promise<Received<ScheduledScan>> {
    const parsed = refusing('InvalidSpec', () => parseScheduledScanSpec(object.spec));
    if ('refusal' in parsed) return done(await this.refuse(key, object, parsed.refusal));
    const created = refusing('Rejected', () => this.options.service.create(account, scheduledScanInputOf(parsed.value), object.metadata!.name!));
    if ('refusal' in created) return done(await this.refuse(key, object, created.refusal));
    this.act(key, { action: 'createRow', scheduledScanId: created.value.id });
    this.options.events.normal(object, 'Accepted', `Vigil created schedule ${created.value.id} (${created.value.schedule}) for account ${account.name}`);
    this.rowSpecChanged.delete(key); // the row was made from this very spec
    await this.holdFinalizer(key, object);
    return { row: created.value, project: (latest) => this.writeStatus(key, object, latest, undefined, object.metadata?.generation) };
  }

  /** A CR with its row: a new generation of the spec is applied to the row; a row changed through the API is shown in the spec. */
  private async follow(key: string, account: Account, object: ScheduledScanObject, row: ScheduledScan, pushSpec: boolean): Promise<Received<ScheduledScan>> {
    const uid = object.metadata?.uid ?? '';
    const generation = object.metadata?.generation ?? 1;
    const memo = this.written.get(key);
    const mine = memo !== undefined && memo.uid === uid ? memo : undefined;
    let observed = Math.max(object.status?.observedGeneration ?? 0, mine?.observedGeneration ?? 0);
    // What this process last wrote is at least as new as the cache, which is a watch event behind it.
    let refusal = observed >= generation ? refusalShown(mine?.status?.conditions ?? object.status?.conditions, observed) : undefined;
    let current = object;
    if (generation > observed) {
      refusal = this.applySpec(key, account, object, row);
      observed = generation;
      row = this.options.repository.findByIdUnscoped(row.id) ?? row;
      this.rowSpecChanged.delete(key); // the row now holds what the spec says (or was refused and kept)
    } else if (pushSpec || refusal === undefined) {
      // An observed spec that says something else than the row: the row changed through the API (told now, or before a
      // restart). Only a refused spec stays as written, until the row changes again.
      const spec = ScheduledScanSpecSchema.safeParse(object.spec);
      if (!spec.success || !specMatchesRow(spec.data, row)) {
        refusal = undefined;
        this.act(key, { action: 'replaceSpec' });
        current = await this.api.patch<ScheduledScanObject>(
          customObjectPath(this.ref(object)),
          [{ op: 'replace', path: '/spec', value: { ...scheduledScanSpecOf(row), ...historyLimitsIn(object.spec) } }],
          JSON_PATCH,
        );
        observed = current.metadata?.generation ?? observed;
        this.written.set(key, { uid, observedGeneration: observed, status: mine?.status });
      }
    }
    await this.holdFinalizer(key, current);
    return { row, project: (latest) => this.writeStatus(key, current, latest, refusal, observed === 0 ? undefined : observed) };
  }

  /** The CR's new spec applied with update's rules; the refusal the status shows when it is not followed. */
  private applySpec(key: string, account: Account, object: ScheduledScanObject, row: ScheduledScan): Refusal | undefined {
    const parsed = refusing('InvalidSpec', () => parseScheduledScanSpec(object.spec));
    if ('refusal' in parsed) return this.refusedChange(key, object, parsed.refusal);
    if (specMatchesRow(parsed.value, row)) return undefined;
    const updated = refusing('Rejected', () => this.options.service.update(account, row.id, scheduledScanInputOf(parsed.value)));
    if ('refusal' in updated) return this.refusedChange(key, object, updated.refusal);
    this.act(key, { action: 'updateRow', scheduledScanId: row.id });
    this.options.events.normal(object, 'Updated', `the schedule follows generation ${object.metadata?.generation ?? 1} of the spec`);
    return undefined;
  }

  /** A refused change to a schedule that exists: it keeps running as it was. */
  private refusedChange(key: string, object: ScheduledScanObject, refusal: Refusal): Refusal {
    const kept = { reason: refusal.reason, message: `${refusal.message}; the schedule keeps its previous configuration` };
    this.act(key, { action: 'refuse', reason: kept.reason });
    this.options.events.warning(object, kept.reason, kept.message);
    return kept;
  }

  /** A CR whose schedule exists holds the finalizer (applied with kubectl, or made before finalizers). */
  private async holdFinalizer(key: string, object: ScheduledScanObject): Promise<void> {
    if ((object.metadata?.finalizers ?? []).includes(SCHEDULED_SCAN_FINALIZER)) return;
    this.act(key, { action: 'addFinalizer' });
    await this.api.patch(customObjectPath(this.ref(object)), addFinalizerPatch(object.metadata?.finalizers, SCHEDULED_SCAN_FINALIZER), JSON_PATCH);
  }

  /** The row's status on the CR when it differs from what the CR shows and from what this process last wrote to it. */
  private async writeStatus(
    key: string,
    object: ScheduledScanObject,
    row: ScheduledScan,
    refusal: Refusal | undefined,
    observedGeneration: number | undefined,
  ): Promise<void> {
    const uid = object.metadata?.uid ?? '';
    const memo = this.written.get(key);
    const mine = memo !== undefined && memo.uid === uid ? memo : undefined;
    const shown = object.status;
    const previous = mine?.status?.conditions ?? shown?.conditions ?? [];
    const desired = scheduledScanStatusOf(row, { refusal, observedGeneration, previous, now: this.options.clock.now() });
    const remember = () => void this.written.set(key, { uid, observedGeneration, status: mine?.status });
    if (statusShows(shown, desired)) return remember();
    if (mine?.status !== undefined && isDeepStrictEqual(mine.status, desired)) return;
    this.act(key, { action: 'patchStatus' });
    await this.api.patch(customObjectPath(this.ref(object), 'status'), { status: desired });
    this.written.set(key, { uid, observedGeneration, status: desired });
    const ranBefore = mine?.status?.lastRan ?? shown?.lastRan ?? null;
    if (desired.lastRan !== null && desired.lastRan !== ranBefore) {
      this.options.events.normal(object, 'Ran', `the run of ${desired.lastRan} created its Scans; the next run is ${desired.nextRun ?? 'none'}`);
    }
  }

  /** `Accepted=False` with what to change; written once per reason and message. */
  private async refuse(key: string, object: ScheduledScanObject, refusal: Refusal, withEvent = true): Promise<void> {
    if (conditionHolds(object.status?.conditions, { type: 'Accepted', status: 'False', ...refusal })) return;
    this.act(key, { action: 'refuse', reason: refusal.reason });
    if (withEvent) this.options.events.warning(object, refusal.reason, refusal.message);
    await writeRefusal(this.api, customObjectPath(this.ref(object), 'status'), object, refusal, this.options.clock.now());
  }

  /**
   * The owner reference a Scan of this schedule's runs gets. The CR comes
   * from the cache, else the cluster; a schedule whose CR is not made yet
   * throws, so the Scan reconciler tries again (with backoff) rather than
   * create the Scan's CR without its owner.
   */
  async ownerReferenceFor(scheduledScanId: string): Promise<OwnerReference | undefined> {
    const row = this.options.repository.findByIdUnscoped(scheduledScanId);
    const namespace = row && this.options.namespaceOf(row.accountId);
    if (row === undefined || namespace === undefined) return undefined;
    const location = { namespace, name: row.objectName };
    let uid = this.options.cached(namespace, row.objectName)?.metadata?.uid;
    if (uid === undefined) {
      try {
        uid = (await this.api.get<ScheduledScanObject>(customObjectPath(this.refOf(location)))).metadata?.uid;
      } catch (error) {
        if (isNotFound(error)) throw new Error(`the ScheduledScan ${namespace}/${row.objectName} that owns this Scan is not created yet`, { cause: error });
        if (statusCodeOf(error) === 403) return undefined; // not readable: the Scan is created without an owner rather than not at all
        throw error;
      }
    }
    if (uid === undefined || uid === '') return undefined;
    return { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND, name: row.objectName, uid, controller: true, blockOwnerDeletion: true };
  }

  private act(key: string, action: ScheduledScanAction): void {
    this.options.onAction?.(key, action);
  }

  private collection(namespace: string) {
    return { group: SCHEDULED_SCAN_GROUP, version: SCHEDULED_SCAN_VERSION, plural: SCHEDULED_SCAN_PLURAL, namespace };
  }

  private refOf(location: { namespace: string; name: string }) {
    return { ...this.collection(location.namespace), name: location.name };
  }

  private ref(object: ScheduledScanObject) {
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return this.refOf({ namespace, name });
  }
}

type Outcome<T> = { value: T } | { refusal: Refusal };

/** Runs a parse or a service call; the InvalidRequestError it throws (a 400 through the API) becomes the reason the CR shows. */
function refusing<T>(reason: string, call: () => T): Outcome<T> {
  try {
    return { value: call() };
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return { refusal: { reason, message: error.message } };
  }
}

/** The refusal of a change the status shows for the generation it observed: the schedule kept its configuration. */
function refusalShown(conditions: readonly Condition[] | undefined, observed: number): Refusal | undefined {
  const accepted = conditions?.find((condition) => condition.type === 'Accepted');
  if (accepted?.status !== 'False' || (accepted.observedGeneration !== undefined && accepted.observedGeneration !== observed)) return undefined;
  return { reason: accepted.reason, message: accepted.message };
}

function done(result: ReconcileResult): Received<ScheduledScan> {
  return { done: result };
}

/** The history limits a spec sets: kept when the row's spec replaces it (the row does not hold them; the Scan reconciler reads them from the CR). */
function historyLimitsIn(spec: unknown): Record<string, unknown> {
  const { successfulScansHistoryLimit, failedScansHistoryLimit } = (spec ?? {}) as Record<string, unknown>;
  return {
    ...(successfulScansHistoryLimit === undefined ? {} : { successfulScansHistoryLimit }),
    ...(failedScansHistoryLimit === undefined ? {} : { failedScansHistoryLimit }),
  };
}
