/**
 * An object's face: what a runtime shows of a Scan or ScheduledScan beside
 * its record (the SQLite row). On Kubernetes it is the custom resource, its
 * spec an input and its status a projection; the embedded runtime shows
 * none. The reconciler of each Kind (scan-reconciler.ts,
 * scheduled-scan-reconciler.ts) asks its face twice per pass: first to
 * receive the object (deletion, adoption, a face made for a row without
 * one), then, after converging the workload, to project the row once.
 */
import type { Account } from '../../domain/accounts/account.js';
import type { ReconcileResult } from './work-queue.js';

/** A work queue key: one per object, `namespace/name` (the account's namespace and the object's name) in both runtimes. */
export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * What receiving an object decided: a row to converge (made now when a face
 * was adopted) with how this pass projects it once converged, or the pass
 * ends here (a deletion under way, a refusal, nothing to do).
 */
export type Received<Row> = { row: Row; project: (row: Row) => Promise<ReconcileResult> } | { done: ReconcileResult };

/** Where a face's own changes go: a key to reconcile, or a full pass (the face listed everything again). */
export interface FaceSink {
  enqueue(key: string): void;
  resync(): void;
}

export interface ReconcileFace<Row> {
  /** Reads the face of `key` and handles what it alone decides; `account` is the namespace's, `row` the record of that name. */
  receive(key: string, account: Account | undefined, row: Row | undefined): Promise<Received<Row>>;
  /** The reconciler registers here: the face's changes enqueue its keys (an informer's events and full lists). */
  watch(sink: FaceSink): void;
  /** The faces' keys a full pass visits beside the rows' (every custom resource the informer holds). */
  keys(): Iterable<string>;
  /** Whether a full pass visits every row (faces are made and expired for finished ones too) or only those with work left. */
  readonly everyRow: boolean;
  /** A row changed outside the reconciler (the API); `spec` when its configuration may have changed. */
  rowWritten?(key: string, spec: boolean): void;
}

const noProjection = async (): Promise<ReconcileResult> => undefined;

/** The embedded runtime: a row has no face; it is converged as it is, and a key without a row is done. */
export function noFace<Row>(): ReconcileFace<Row> {
  return {
    receive: async (_key, account, row) => (account === undefined || row === undefined ? { done: undefined } : { row, project: noProjection }),
    watch: () => undefined,
    keys: () => [],
    everyRow: false,
  };
}

/** The sooner of two requeues (undefined: none). */
export function sooner(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  if (!a) return b;
  if (!b) return a;
  return a.requeueAfterMs <= b.requeueAfterMs ? a : b;
}
