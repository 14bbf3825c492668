/**
 * Conditions through one helper (DESIGN.md): setCondition, after
 * cert-manager's SetCertificateCondition, writes one condition per type, a
 * type that says what it is about (not a state name), `lastTransitionTime`
 * kept while the status stays the same, and `observedGeneration` set when the
 * object has one; setConditions applies several changes through it, and
 * conditionHolds says whether a change would alter anything. The API's `conditions` and the
 * custom resources' are built by these alone.
 */
import type { Condition } from '../scans/scan.js';

/**
 * - `Accepted`: Vigil took the object (False: refused, with the reason to change).
 * - `Admitted`: the Scan got past the account's limits (False: OVER_LIMIT).
 * - `WorkloadReady`: the scanner workload runs (False once it ended or never could start).
 * - `Succeeded` / `Failed` / `Stopped`: how a Scan ended.
 * - `Scheduled`: a ScheduledScan has a next run.
 * - `Authenticated`: a web scan's login recording was replayed (False: which command failed and why).
 * - `RecordMissing`: a Scan or ScheduledScan resource carries Vigil's mark but Vigil has no record of it (its database was restored from an older
 *   backup); it is left alone.
 */
export type ConditionType = 'Accepted' | 'Admitted' | 'WorkloadReady' | 'Succeeded' | 'Failed' | 'Stopped' | 'Scheduled' | 'Authenticated' | 'RecordMissing';

export interface ConditionChange {
  type: ConditionType;
  status: Condition['status'];
  reason: string;
  message: string;
}

/**
 * The conditions with `change` applied: the condition of its type replaced,
 * its transition time kept when the status did not change, the others left
 * in their order. Never mutates its input.
 */
export function setCondition(conditions: readonly Condition[], change: ConditionChange, now: Date | string, observedGeneration?: number): Condition[] {
  const before = conditions.find((existing) => existing.type === change.type);
  const at = typeof now === 'string' ? now : now.toISOString();
  const next: Condition = {
    type: change.type,
    status: change.status,
    reason: change.reason,
    message: change.message,
    lastTransitionTime: before !== undefined && before.status === change.status ? before.lastTransitionTime : at,
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
  if (before === undefined) return [...conditions, next];
  return conditions.map((existing) => (existing === before ? next : existing));
}

/** Several changes in order, as one. */
export function setConditions(
  conditions: readonly Condition[],
  changes: readonly ConditionChange[],
  now: Date | string,
  observedGeneration?: number,
): Condition[] {
  return changes.reduce<Condition[]>((current, change) => setCondition(current, change, now, observedGeneration), [...conditions]);
}

function findCondition(conditions: readonly Condition[] | undefined, type: ConditionType): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/** True when the condition of `change`'s type already has its status, reason and message: there is nothing to write (write status only when it changed). */
export function conditionHolds(conditions: readonly Condition[] | undefined, change: ConditionChange): boolean {
  const current = findCondition(conditions, change.type);
  return current !== undefined && current.status === change.status && current.reason === change.reason && current.message === change.message;
}
