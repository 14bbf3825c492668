/**
 * What the Scan and ScheduledScan reconcilers share: the labels and
 * finalizers Vigil puts on its objects, the work queue's `namespace/name`
 * keys, and the small steps both take the same way (a finalizer released,
 * a 404 taken as done, a status compared with the one to write).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeApi } from './kube-api.js';
import { isNotFound } from './kube-errors.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The label selector of every object Vigil creates (its informers list only these). */
export const MANAGED_BY_VIGIL = `${MANAGED_BY_LABEL}=vigil`;
/** The /v1 id of a Scan (a UUID, a valid label value), on its CR and its children: the Job informer maps events back to the Scan with it. */
export const SCAN_ID_LABEL = 'vigil.dev/scan-id';
/** The Scan's object name on its children (shortened to a label value). */
export const SCAN_NAME_LABEL = 'vigil.dev/scan';
export const SCAN_TYPE_LABEL = 'vigil.dev/scan-type';
export const SCHEDULED_SCAN_ID_LABEL = 'vigil.dev/scheduled-scan-id';

/** Held on every Scan CR until its scan is stopped and its row deleted, so a deletion while Vigil is down is still seen. */
export const SCAN_FINALIZER = 'vigil.dev/scan';
/** Held on every ScheduledScan CR until its schedule is deleted, so a deletion while Vigil is down still deletes the schedule. */
export const SCHEDULED_SCAN_FINALIZER = 'vigil.dev/scheduledscan';

/** The metadata both reconcilers read from a cached object. */
export interface CachedMetadata {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: unknown;
}

export { objectKey, splitKey } from '../../app/controller/faces.js';

/** A call whose object may be gone already: gone is what it wanted, or nothing is left to do. */
export async function ignoringNotFound(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * Removes `finalizer` with a merge patch of the list as read, with its
 * resourceVersion (a conflict is retried by the work queue on fresh data);
 * false, sending nothing, when the object does not hold it.
 */
export async function releaseFinalizer(api: KubeApi, path: string, metadata: CachedMetadata | undefined, finalizer: string): Promise<boolean> {
  const finalizers = metadata?.finalizers ?? [];
  if (!finalizers.includes(finalizer)) return false;
  await ignoringNotFound(() =>
    api.patch(path, { metadata: { finalizers: finalizers.filter((entry) => entry !== finalizer), resourceVersion: metadata?.resourceVersion } }),
  );
  return true;
}

/**
 * Whether a CR's status already shows every field of the desired one (a
 * null field is one the CR leaves out); `ignored` fields are not compared.
 */
export function statusShows(current: object | undefined, desired: object, ignored: (field: string) => boolean = () => false): boolean {
  if (current === undefined) return false;
  return Object.entries(desired).every(
    ([field, value]) => ignored(field) || isDeepStrictEqual((current as Record<string, unknown>)[field] ?? null, value ?? null),
  );
}
