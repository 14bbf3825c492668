/**
 * How a custom resource applied with kubectl is told that Vigil will not act
 * on it (DESIGN.md decision 6): an `Accepted=False` condition whose reason and
 * message say what to change. Scans and ScheduledScans are refused alike.
 */
import { kubePaths, type KubeApi } from './kube-api.js';
import type { Condition } from '../../domain/scans/scan.js';
import { conditionHolds, setCondition, type ConditionChange } from '../../domain/conditions/condition.js';

export interface CustomObjectRef {
  group: string;
  version: string;
  plural: string;
  namespace: string;
  name: string;
}

/**
 * Why a Scan in a namespace Vigil may not write to cannot run: the chart
 * grants writes only in the tenant namespaces its values list, so the fix is
 * a values change, not a retry.
 */
export function namespaceNotWritableMessage(namespace: string, apiServerMessage: string): string {
  return `Vigil may not create its scanner objects in namespace ${namespace} (the API server said: ${apiServerMessage}); add ${namespace} to tenants.namespaces in the Helm chart's values and run helm upgrade`;
}

/** The path of a custom resource, or of its subresource (`status`). */
export function customObjectPath(ref: CustomObjectRef, subresource?: string): string {
  return kubePaths.namespaced(ref.group, ref.version, ref.namespace, ref.plural, ref.name, subresource);
}

/** The status of a custom resource, as far as a condition write needs it. */
export interface ConditionedObject {
  metadata?: { generation?: number };
  status?: { conditions?: Condition[] };
}

/**
 * Writes a condition through the condition helper (its transition time kept
 * while its status stays, the object's generation observed), sending the
 * whole merged list so no other condition is lost; false, sending nothing,
 * when the status already says the same.
 */
export async function writeCondition(api: KubeApi, path: string, object: ConditionedObject, change: ConditionChange, now: Date): Promise<boolean> {
  if (conditionHolds(object.status?.conditions, change)) return false;
  const conditions = setCondition(object.status?.conditions ?? [], change, now, object.metadata?.generation);
  await api.patch(path, { status: { conditions } });
  return true;
}

/** `Accepted=False` with what to change. */
export function writeRefusal(api: KubeApi, path: string, object: ConditionedObject, refusal: { reason: string; message: string }, now: Date): Promise<boolean> {
  return writeCondition(api, path, object, { type: 'Accepted', status: 'False', ...refusal }, now);
}
