/**
 * Keeps each ScheduledScan's custom resource in step with its row, as the
 * Scan mirror does for Scans (DESIGN.md decisions 2 and 3): the row is the
 * record; the CR shows it and is kubectl's way in. The CR is created with the
 * row (one applied with kubectl already exists, which is fine), its spec is
 * replaced when the row's configuration changes through the API, its status
 * (nextRun, lastRan, conditions) is merge-patched on /status only when it
 * changed, and it is deleted with the row. Writes never fail the caller: they
 * are logged and retried with backoff, and flushed at shutdown.
 */
import * as k8s from '@kubernetes/client-node';
import type { Timers } from '../../app/controller/timer.js';
import type { ScheduledScan, ScheduledScanRepository } from '../../app/ports.js';
import type { Clock } from '../../domain/clock.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Condition } from '../../domain/scans/scan.js';
import {
  SCHEDULED_SCAN_API_VERSION,
  SCHEDULED_SCAN_GROUP,
  SCHEDULED_SCAN_KIND,
  SCHEDULED_SCAN_PLURAL,
  SCHEDULED_SCAN_VERSION,
  ScheduledScanSpecSchema,
  type ScheduledScanSpec,
} from '../../domain/schedules/scheduled-scan-resource.js';
import { CoalescedWrites } from './coalesced-writes.js';
import type { EventRecorder } from './event-recorder.js';
import type { OwnerReference } from './job-manifest.js';
import { createOrRead, isNotFound } from './kube-errors.js';
import { SCHEDULED_SCAN_ID_LABEL, scheduledScanSpecOf, scheduledScanStatusOf, specMatchesRow, type Refusal } from './scheduled-scan-object.js';

/** Held on every ScheduledScan CR until its schedule is deleted, so a deletion while Vigil is down still deletes the schedule. */
export const SCHEDULED_SCAN_FINALIZER = 'vigil.dev/scheduledscan';

/** A ScheduledScan CR as read from the cluster or the informer's cache. */
export interface ScheduledScanObject {
  metadata?: { name?: string; namespace?: string; uid?: string; generation?: number; resourceVersion?: string; labels?: Record<string, string>; finalizers?: string[]; deletionTimestamp?: unknown };
  spec?: unknown;
  status?: { scheduledScanId?: string; observedGeneration?: number; conditions?: Condition[] };
}

interface ObjectLocation {
  namespace: string;
  name: string;
}

/** What the mirror knows of a row's CR. */
interface KnownObject {
  uid: string;
  generation: number;
  /** Its spec, when it is one Vigil accepts. */
  spec: ScheduledScanSpec | undefined;
  /** The generation whose spec the row holds or that was refused. */
  observedGeneration: number | undefined;
  conditions: Condition[];
}

type MirrorRequest = { kind: 'write'; spec: boolean } | { kind: 'delete'; location: ObjectLocation };

/** A delete supersedes writes; writes fold into one that replaces the spec when any of them asked to. */
function mergeRequests(queued: MirrorRequest, next: MirrorRequest): MirrorRequest {
  if (queued.kind === 'delete' || next.kind === 'delete') return queued.kind === 'delete' ? queued : next;
  return { kind: 'write', spec: queued.spec || next.spec };
}

function knownFrom(object: ScheduledScanObject, observedGeneration: number | undefined): KnownObject {
  const parsed = ScheduledScanSpecSchema.safeParse(object.spec);
  return {
    uid: object.metadata?.uid ?? '',
    generation: object.metadata?.generation ?? 1,
    spec: parsed.success ? parsed.data : undefined,
    observedGeneration,
    conditions: object.status?.conditions ?? [],
  };
}

export interface ScheduledScanMirrorOptions {
  kubeConfig: k8s.KubeConfig;
  /** The row as stored now: a write shows the committed state, whatever the request that asked for it saw. */
  read: (id: string) => ScheduledScan | undefined;
  namespaceOf: (accountId: string) => string | undefined;
  clock: Clock;
  timers: Timers;
  onError: (id: string, error: unknown) => void;
  /** A Ran Event on the CR after each run; none when not given. */
  events?: EventRecorder;
}

const MERGE_PATCH = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const JSON_PATCH = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);

export class ScheduledScanMirror {
  private readonly api: k8s.CustomObjectsApi;
  private readonly writes: CoalescedWrites<MirrorRequest>;
  private readonly objects = new Map<string, KnownObject>();
  private readonly refusals = new Map<string, Refusal>();
  private readonly lastWritten = new Map<string, string>();
  /** Rows whose CR was deleted with kubectl: it is not created again (the informer deletes the row). */
  private readonly gone = new Set<string>();

  constructor(private readonly options: ScheduledScanMirrorOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.writes = new CoalescedWrites({
      write: (id, request) => this.write(id, request),
      onError: options.onError,
      merge: mergeRequests,
      retry: { timers: options.timers, baseMs: 1000, maxMs: 60_000 },
    });
  }

  /** The row was written; `spec` when its configuration may have changed (create, update), not only its runs. */
  changed(id: string, spec: boolean): void {
    this.writes.request(id, { kind: 'write', spec });
  }

  deleted(row: ScheduledScan): void {
    if (this.gone.delete(row.id)) return this.forget(row.id); // its CR went first: nothing to delete, nor to cascade differently
    const location = this.locationOf(row);
    if (location !== undefined) this.writes.request(row.id, { kind: 'delete', location });
  }

  /** The row's CR was deleted with kubectl (or is being deleted): it is neither written nor created again. */
  objectGone(id: string): void {
    this.forget(id);
    this.gone.add(id);
  }

  /** A CR whose schedule was deleted through the API while its own deletion failed or was still on its way. */
  deleteLeftover(id: string, object: ScheduledScanObject): void {
    const { namespace, name } = object.metadata ?? {};
    if (namespace !== undefined && name !== undefined) this.writes.request(id, { kind: 'delete', location: { namespace, name } });
  }

  /** The informer found the CR's spec to be the row's configuration (or made it so). */
  accepted(id: string, object: ScheduledScanObject): void {
    this.refusals.delete(id);
    this.observe(id, object);
  }

  /** The informer refused the CR's current spec; the row keeps its configuration and the status says why. */
  refused(id: string, object: ScheduledScanObject, refusal: Refusal): void {
    this.refusals.set(id, refusal);
    this.observe(id, object);
  }

  /** Remembers a CR the informer saw without acting on it, so that later writes know it exists. */
  saw(id: string, object: ScheduledScanObject): void {
    const known = this.objects.get(id);
    const same = known !== undefined && known.uid === object.metadata?.uid;
    if (same && known.generation > (object.metadata?.generation ?? 1)) return; // the cache lags behind the mirror's own write
    // A status in the cache may lag too: what the mirror observed never goes back.
    const observed = Math.max(same ? (known.observedGeneration ?? 0) : 0, object.status?.observedGeneration ?? 0);
    const seen = knownFrom(object, observed === 0 ? undefined : observed);
    this.objects.set(id, same ? { ...seen, conditions: known.conditions } : seen);
  }

  /** The last generation of this CR (by uid) the row was compared with; undefined when the mirror knows none. */
  observedGeneration(id: string, uid: string | undefined): number | undefined {
    const known = this.objects.get(id);
    return known?.uid === uid ? known?.observedGeneration : undefined;
  }

  /** Resolves once the mirror's own writes for the row are done, so what it wrote is known before a CR is compared with the row. */
  settled(id: string): Promise<void> {
    return this.writes.settled(id);
  }

  /** The owner reference a Scan of this schedule's runs gets; undefined when the CR's uid cannot be learnt. */
  async ownerReferenceFor(id: string): Promise<OwnerReference | undefined> {
    await this.writes.settled(id); // the CR may be being created right now, with the run that asks
    const row = this.options.read(id);
    const location = row && this.locationOf(row);
    if (location === undefined) return undefined;
    const uid = this.objects.get(id)?.uid ?? (await this.readUid(location));
    if (uid === undefined || uid === '') return undefined;
    return { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND, name: location.name, uid, controller: true, blockOwnerDeletion: true };
  }

  /** Resolves once every requested write has been attempted (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writes.flush();
  }

  /** Cancels waiting retries; call flush() for the writes in flight. */
  stop(): void {
    this.writes.stop();
  }

  private observe(id: string, object: ScheduledScanObject): void {
    const before = this.objects.get(id);
    const known = knownFrom(object, object.metadata?.generation);
    const same = before?.uid === known.uid;
    if (!same) this.lastWritten.delete(id); // a CR deleted and applied again: its status is written afresh
    this.objects.set(id, same ? { ...known, conditions: before.conditions } : known);
    this.gone.delete(id);
    this.changed(id, false);
  }

  private async write(id: string, request: MirrorRequest): Promise<void> {
    if (request.kind === 'delete') return this.deleteObject(id, request.location);
    const row = this.options.read(id);
    const location = row && this.locationOf(row);
    if (row === undefined || location === undefined || this.gone.has(id)) return; // deleted, or its insert rolled back
    try {
      const known = this.objects.get(id) ?? (await this.createObject(row, location));
      if (request.spec && (known.spec === undefined || !specMatchesRow(known.spec, row))) await this.replaceSpec(row, location);
      await this.writeStatus(row, location);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.objectGone(id);
    }
  }

  private async createObject(row: ScheduledScan, location: ObjectLocation): Promise<KnownObject> {
    const labels = { [SCHEDULED_SCAN_ID_LABEL]: row.id, 'app.kubernetes.io/managed-by': 'vigil' };
    const metadata = { ...location, labels, finalizers: [SCHEDULED_SCAN_FINALIZER] };
    const body = { apiVersion: SCHEDULED_SCAN_API_VERSION, kind: SCHEDULED_SCAN_KIND, metadata, spec: scheduledScanSpecOf(row) };
    let created = false;
    const object = (await createOrRead(
      async () => {
        const answer = await this.api.createNamespacedCustomObject({ ...this.collection(location.namespace), body });
        created = true;
        return answer;
      },
      () => this.api.getNamespacedCustomObject(this.ref(location)),
    )) as ScheduledScanObject;
    // One applied with kubectl is the informer's to compare; one Vigil made holds the row's configuration.
    const known = knownFrom(object, created ? object.metadata?.generation : object.status?.observedGeneration);
    this.objects.set(row.id, known);
    return known;
  }

  private async replaceSpec(row: ScheduledScan, location: ObjectLocation): Promise<void> {
    const spec = scheduledScanSpecOf(row);
    const object = (await this.api.patchNamespacedCustomObject({ ...this.ref(location), body: [{ op: 'replace', path: '/spec', value: spec }] }, JSON_PATCH)) as ScheduledScanObject;
    this.objects.set(row.id, { ...knownFrom(object, object.metadata?.generation), conditions: this.objects.get(row.id)?.conditions ?? [] });
  }

  private async writeStatus(row: ScheduledScan, location: ObjectLocation): Promise<void> {
    const known = this.objects.get(row.id)!;
    const status = scheduledScanStatusOf(row, {
      refusal: this.refusals.get(row.id),
      observedGeneration: known.observedGeneration,
      previous: known.conditions,
      now: this.options.clock.now(),
    });
    const text = JSON.stringify(status);
    const before = this.lastWritten.get(row.id);
    if (before === text) return;
    await this.api.patchNamespacedCustomObjectStatus({ ...this.ref(location), body: { status } }, MERGE_PATCH);
    this.lastWritten.set(row.id, text);
    const ranBefore = before === undefined ? undefined : (JSON.parse(before) as { lastRan?: string | null }).lastRan;
    if (before !== undefined && status.lastRan && status.lastRan !== ranBefore) {
      this.options.events?.normal({ metadata: { ...location, uid: known.uid } }, 'Ran', `the run of ${status.lastRan} created its Scans; the next run is ${status.nextRun ?? 'none'}`);
    }
    const current = this.objects.get(row.id); // the informer may have told more about the CR meanwhile
    if (current !== undefined) current.conditions = status.conditions ?? [];
  }

  /** Orphans the Scans of earlier runs: deleting a schedule through the API keeps the Scans it ran, as their rows are kept. */
  private async deleteObject(id: string, location: ObjectLocation): Promise<void> {
    try {
      await this.api.deleteNamespacedCustomObject({ ...this.ref(location), propagationPolicy: 'Orphan' });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.forget(id);
  }

  private async readUid(location: ObjectLocation): Promise<string | undefined> {
    try {
      return ((await this.api.getNamespacedCustomObject(this.ref(location))) as ScheduledScanObject).metadata?.uid;
    } catch {
      return undefined; // the Scan is created without an owner rather than not at all
    }
  }

  private forget(id: string): void {
    this.objects.delete(id);
    this.refusals.delete(id);
    this.lastWritten.delete(id);
  }

  private locationOf(row: ScheduledScan): ObjectLocation | undefined {
    const namespace = this.options.namespaceOf(row.accountId);
    return namespace === undefined ? undefined : { namespace, name: row.objectName };
  }

  private collection(namespace: string) {
    return { group: SCHEDULED_SCAN_GROUP, version: SCHEDULED_SCAN_VERSION, plural: SCHEDULED_SCAN_PLURAL, namespace };
  }

  private ref(location: ObjectLocation) {
    return { ...this.collection(location.namespace), name: location.name };
  }
}

/** A ScheduledScanRepository that tells the mirror about every row it writes; reads pass straight through. */
export class MirroredScheduledScanRepository implements ScheduledScanRepository {
  constructor(
    private readonly inner: ScheduledScanRepository,
    private readonly mirror: ScheduledScanMirror,
  ) {}

  insert(scheduledScan: ScheduledScan): void {
    this.inner.insert(scheduledScan);
    this.mirror.changed(scheduledScan.id, true);
  }

  update(scheduledScan: ScheduledScan): void {
    this.inner.update(scheduledScan);
    this.mirror.changed(scheduledScan.id, true);
  }

  delete(accountId: string, id: string): boolean {
    const row = this.inner.findById(accountId, id);
    const deleted = this.inner.delete(accountId, id);
    if (deleted && row !== undefined) this.mirror.deleted(row);
    return deleted;
  }

  recordRun(id: string, expectedNextRun: string, lastRan: string, nextRun: string | null): boolean {
    const recorded = this.inner.recordRun(id, expectedNextRun, lastRan, nextRun);
    if (recorded) this.mirror.changed(id, false);
    return recorded;
  }

  findById = (accountId: string, id: string) => this.inner.findById(accountId, id);
  findByIdUnscoped = (id: string) => this.inner.findByIdUnscoped(id);
  findByObjectName = (accountId: string, objectName: string) => this.inner.findByObjectName(accountId, objectName);
  list = (accountId: string, pageSize: number, after: readonly CursorValue[] | undefined) => this.inner.list(accountId, pageSize, after);
  idsWithNextRun = () => this.inner.idsWithNextRun();
}
