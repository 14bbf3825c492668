/**
 * ScheduledScans applied with kubectl (DESIGN.md decisions 4 and 6). Informer
 * events enqueue `namespace/name`; a reconcile reads the CR from the
 * informer's cache and the row by object name, and converges the row on the
 * CR: a CR without a row creates one for the namespace's account, a spec that
 * says something else than the row updates it, and a CR that is gone deletes
 * its row. The row stays the record: the CR's own writes by the mirror are
 * recognised by generation (and by comparing the spec with the row), so
 * nothing Vigil writes comes back as a change to apply.
 */
import * as k8s from '@kubernetes/client-node';
import type { Timers } from '../../app/controller/timer.js';
import { ControllerLoop } from '../../app/controller/controller-loop.js';
import type { ScheduledScan, ScheduledScanRepository } from '../../app/ports.js';
import type { ScheduledScansService } from '../../app/scheduled-scans-service.js';
import type { Account } from '../../domain/accounts/account.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import {
  SCHEDULED_SCAN_GROUP,
  SCHEDULED_SCAN_PLURAL,
  SCHEDULED_SCAN_VERSION,
  parseScheduledScanSpec,
} from '../../domain/schedules/scheduled-scan-resource.js';
import { namespaceNotBoundMessage, refusedCondition, writeRefusal } from './refusals.js';
import { SCHEDULED_SCAN_ID_LABEL, scheduledScanInputOf, specMatchesRow, type Refusal } from './scheduled-scan-object.js';
import { SCHEDULED_SCAN_FINALIZER, type ScheduledScanMirror, type ScheduledScanObject } from './scheduled-scan-mirror.js';
import { isNotFound } from './kube-errors.js';
import { addFinalizerPatch } from './finalizers.js';
import type { EventRecorder } from './event-recorder.js';

export interface AppliedScheduledScansOptions {
  kubeConfig: k8s.KubeConfig;
  accountForNamespace: (namespace: string) => Account | undefined;
  service: ScheduledScansService;
  /** Reads only: the row by object name, and by id for the CR's link. */
  repository: Pick<ScheduledScanRepository, 'findByObjectName' | 'findByIdUnscoped'>;
  mirror: ScheduledScanMirror;
  /** The CR as the informer last saw it. */
  cached: (namespace: string, name: string) => ScheduledScanObject | undefined;
  /** Every CR key in the cache: the full pass at start and after each informer re-list. */
  listKeys: () => Iterable<string>;
  /** Events on ScheduledScans (accepted, refused with why, updated); none when not given. */
  events?: EventRecorder;
  clock: Clock;
  timers: Timers;
  onError: (key: string, error: unknown) => void;
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

export class AppliedScheduledScans {
  readonly loop: ControllerLoop;
  private readonly api: k8s.CustomObjectsApi;
  /** CRs (by uid) this process gave the finalizer. */
  private readonly finalized = new Set<string>();

  constructor(private readonly options: AppliedScheduledScansOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.loop = new ControllerLoop({ timers: options.timers, onError: options.onError, reconcile: (key) => this.reconcile(key), listKeys: options.listKeys, workers: 1 });
  }

  /** Called for every informer event (added, updated, deleted): only the key is kept. */
  enqueue(object: ScheduledScanObject): void {
    const { namespace, name } = object.metadata ?? {};
    if (namespace !== undefined && name !== undefined) this.loop.enqueue(`${namespace}/${name}`);
  }

  /** A full pass over every CR in the cache (the informer listed again). */
  resync(): void {
    this.loop.resync();
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const account = this.options.accountForNamespace(namespace);
    const cached = this.options.cached(namespace, name);
    if (account === undefined) {
      if (cached?.metadata?.deletionTimestamp !== undefined) return this.releaseFinalizer(cached);
      const object = this.current(namespace, name);
      if (object !== undefined) await this.refuse(object, { reason: 'NamespaceNotBound', message: namespaceNotBoundMessage(namespace) });
      return;
    }
    // The mirror's own writes first, so that what it wrote is known before the CR is compared with the row.
    const before = this.options.repository.findByObjectName(account.id, name);
    if (before !== undefined) await this.options.mirror.settled(before.id);
    const object = this.current(namespace, name);
    const row = this.options.repository.findByObjectName(account.id, name);
    if (object === undefined) {
      if (row !== undefined) this.deleteRow(account, row);
      // kubectl delete (now or while Vigil was down), or a delete through the API: the schedule is gone, the CR may go.
      const deleting = this.options.cached(namespace, name);
      if (deleting?.metadata?.deletionTimestamp !== undefined) await this.releaseFinalizer(deleting);
      return;
    }
    if (row === undefined) await this.adopt(account, object);
    else this.follow(account, row, object);
    if (this.options.repository.findByObjectName(account.id, name) !== undefined) await this.holdFinalizer(object);
  }

  /** A CR whose schedule exists holds the finalizer (applied with kubectl, or made before finalizers). */
  private async holdFinalizer(object: ScheduledScanObject): Promise<void> {
    const finalizers = object.metadata?.finalizers ?? [];
    const uid = object.metadata?.uid ?? '';
    // The cache is a watch event behind the patch: a uid already patched is not patched again.
    if (finalizers.includes(SCHEDULED_SCAN_FINALIZER) || this.finalized.has(uid)) return;
    await this.api.patchNamespacedCustomObject({ ...this.ref(object), body: addFinalizerPatch(object.metadata?.finalizers, SCHEDULED_SCAN_FINALIZER) }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
    this.finalized.add(uid);
    if (this.finalized.size > 10_000) this.finalized.delete(this.finalized.values().next().value!);
  }

  private async releaseFinalizer(object: ScheduledScanObject): Promise<void> {
    const finalizers = object.metadata?.finalizers ?? [];
    if (!finalizers.includes(SCHEDULED_SCAN_FINALIZER)) return;
    try {
      await this.api.patchNamespacedCustomObject(
        { ...this.ref(object), body: { metadata: { finalizers: finalizers.filter((entry) => entry !== SCHEDULED_SCAN_FINALIZER), resourceVersion: object.metadata?.resourceVersion } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** The CR from the cache; one being deleted counts as gone. */
  private current(namespace: string, name: string): ScheduledScanObject | undefined {
    const object = this.options.cached(namespace, name);
    return object?.metadata?.deletionTimestamp === undefined ? object : undefined;
  }

  /** The CR was deleted with kubectl: so is the schedule. */
  private deleteRow(account: Account, row: ScheduledScan): void {
    this.options.mirror.objectGone(row.id);
    try {
      this.options.service.delete(account, row.id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }

  /** A CR with no row: applied with kubectl, so a new schedule; or left over from one deleted through the API. */
  private async adopt(account: Account, object: ScheduledScanObject): Promise<void> {
    const linkedId = object.metadata?.labels?.[SCHEDULED_SCAN_ID_LABEL] ?? object.status?.scheduledScanId;
    if (linkedId !== undefined && this.options.repository.findByIdUnscoped(linkedId) === undefined) {
      return this.options.mirror.deleteLeftover(linkedId, object);
    }
    const parsed = refusing('InvalidSpec', () => parseScheduledScanSpec(object.spec));
    if ('refusal' in parsed) return this.refuse(object, parsed.refusal);
    const created = refusing('Rejected', () => this.options.service.create(account, scheduledScanInputOf(parsed.value), object.metadata!.name!));
    if ('refusal' in created) return this.refuse(object, created.refusal);
    this.options.mirror.accepted(created.value.id, object);
    this.options.events?.normal(object, 'Accepted', `Vigil created schedule ${created.value.id} (${created.value.schedule}) for account ${account.name}`);
  }

  /** A CR with a row: a spec changed since the row was last compared with it is applied with update's rules. */
  private follow(account: Account, row: ScheduledScan, object: ScheduledScanObject): void {
    const { uid, generation = 1 } = object.metadata ?? {};
    const observed = Math.max(this.options.mirror.observedGeneration(row.id, uid) ?? 0, object.status?.observedGeneration ?? 0);
    if (generation <= observed) return this.options.mirror.saw(row.id, object);
    const parsed = refusing('InvalidSpec', () => parseScheduledScanSpec(object.spec));
    if ('refusal' in parsed) return this.refusedChange(row, object, keptRefusal(parsed.refusal));
    if (specMatchesRow(parsed.value, row)) return this.options.mirror.accepted(row.id, object);
    const updated = refusing('Rejected', () => this.options.service.update(account, row.id, scheduledScanInputOf(parsed.value)));
    if ('refusal' in updated) return this.refusedChange(row, object, keptRefusal(updated.refusal));
    this.options.mirror.accepted(row.id, object);
    this.options.events?.normal(object, 'Updated', `the schedule follows generation ${generation} of the spec`);
  }

  private refusedChange(row: ScheduledScan, object: ScheduledScanObject, refusal: Refusal): void {
    this.options.mirror.refused(row.id, object, refusal);
    this.options.events?.warning(object, refusal.reason, refusal.message);
  }

  private async refuse(object: ScheduledScanObject, refusal: Refusal): Promise<void> {
    const condition = refusedCondition(refusal.reason, refusal.message, this.options.clock.now());
    const accepted = object.status?.conditions?.find((existing) => existing.type === 'Accepted');
    const unchanged = accepted?.status === 'False' && accepted.reason === condition.reason && accepted.message === condition.message;
    // No Event outside the tenants' namespaces: Vigil writes only status there.
    if (!unchanged && refusal.reason !== 'NamespaceNotBound') this.options.events?.warning(object, refusal.reason, refusal.message);
    await writeRefusal(this.api, this.ref(object), object.status?.conditions, condition);
  }

  private ref(object: ScheduledScanObject) {
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return { group: SCHEDULED_SCAN_GROUP, version: SCHEDULED_SCAN_VERSION, plural: SCHEDULED_SCAN_PLURAL, namespace, name };
  }
}

/** A refused change to a schedule that exists: it keeps running as it was. */
function keptRefusal(refusal: Refusal): Refusal {
  return { reason: refusal.reason, message: `${refusal.message}; the schedule keeps its previous configuration` };
}
