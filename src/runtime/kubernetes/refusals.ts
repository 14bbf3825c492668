/**
 * How a custom resource applied with kubectl is told that Vigil will not act
 * on it (DESIGN.md decision 6): an `Accepted=False` condition whose reason and
 * message say what to change. Scans and ScheduledScans are refused alike.
 */
import { kubePaths, type KubeApi } from './kube-api.js';
import type { Condition } from '../../domain/scans/scan.js';

export interface CustomObjectRef {
  group: string;
  version: string;
  plural: string;
  namespace: string;
  name: string;
}

export function refusedCondition(reason: string, message: string, at: Date): Condition {
  return { type: 'Accepted', status: 'False', reason, message, lastTransitionTime: at.toISOString() };
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

/** Writes the refusal with a merge patch on /status; an unchanged reason and message is not written again. */
export async function writeRefusal(api: KubeApi, ref: CustomObjectRef, current: readonly Condition[] | undefined, refusal: Condition): Promise<void> {
  const accepted = current?.find((condition) => condition.type === 'Accepted');
  if (accepted?.status === 'False' && accepted.reason === refusal.reason && accepted.message === refusal.message) return;
  await api.patch(customObjectPath(ref, 'status'), { status: { conditions: [refusal] } });
}
