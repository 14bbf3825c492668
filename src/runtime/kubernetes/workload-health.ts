/**
 * What a scanner Job and its pods say about the Scan, read from informer
 * caches (no request). Pure: the observer hands in the objects and the times
 * it first saw a problem, so every rule is a table test.
 *
 * Fail fast (issue 13): a workload that cannot start fails the Scan within
 * two minutes with a condition naming the cause, instead of RUNNING until the
 * Job's deadline. An image that cannot be pulled gets a short grace (a
 * registry hiccup heals itself); a container whose configuration is invalid
 * never heals and fails at once.
 */
import type * as k8s from './client-node.js';

/** How long an image may fail to pull before the Scan fails. */
export const IMAGE_PULL_GRACE_MS = 60_000;
/** How long a Job may have no pod before Vigil reads the Job's events for why (one request, on that path only). */
export const NO_POD_GRACE_MS = 30_000;

export type JobHealth =
  { phase: 'Complete' } | { phase: 'Failed'; reason: string; message: string } | { phase: 'Running'; recheckAfterMs?: number; checkEvents?: boolean };

export interface PodProblem {
  /** A key that stays the same while the problem does (when it was first seen is kept under it). */
  key: string;
  reason: string;
  message: string;
  /** Failed at once, or only once it lasted the grace period. */
  graceMs: number;
}

type ContainerStatus = k8s.V1ContainerStatus;

const IMAGE_PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff']);
const INVALID_CONFIGURATION_REASONS = new Set(['CreateContainerConfigError', 'InvalidImageName']);

/** The first problem a pod's containers wait on, if any. */
export function podProblem(pod: k8s.V1Pod): PodProblem | undefined {
  const statuses: ContainerStatus[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const waiting = status.state?.waiting;
    if (waiting?.reason === undefined) continue;
    const detail = waiting.message === undefined || waiting.message === '' ? '' : `: ${waiting.message}`;
    if (IMAGE_PULL_REASONS.has(waiting.reason)) {
      return {
        key: `${pod.metadata?.name}/${status.name}/pull`,
        reason: 'ImagePullFailed',
        message: `container ${status.name} cannot pull image ${status.image}${detail}; check the image name, the registry and its pull secret`,
        graceMs: IMAGE_PULL_GRACE_MS,
      };
    }
    if (INVALID_CONFIGURATION_REASONS.has(waiting.reason)) {
      return {
        key: `${pod.metadata?.name}/${status.name}/config`,
        reason: 'ContainerConfigInvalid',
        message: `container ${status.name} cannot be created (${waiting.reason})${detail}`,
        graceMs: 0,
      };
    }
  }
  return undefined;
}

export interface HealthInput {
  job: k8s.V1Job;
  pods: readonly k8s.V1Pod[];
  now: number;
  /** When the observer first saw each problem key (and `nopod` for a Job without pods). */
  firstSeen: (key: string) => number;
  /** Why the Job could not create its pod, from its FailedCreate event, once read. */
  failedCreate?: string;
}

export function jobHealth({ job, pods, now, firstSeen, failedCreate }: HealthInput): JobHealth {
  const conditions = job.status?.conditions ?? [];
  const failed = conditions.find((condition) => condition.type === 'Failed' && condition.status === 'True');
  if (failed !== undefined) return jobFailure(failed);
  if (conditions.some((condition) => condition.type === 'Complete' && condition.status === 'True')) return { phase: 'Complete' };
  if (pods.length === 0) return noPodHealth(now, firstSeen('nopod'), failedCreate);
  let recheckAfterMs: number | undefined;
  for (const pod of pods) {
    const problem = podProblem(pod);
    if (problem === undefined) continue;
    const waited = now - firstSeen(problem.key);
    if (waited >= problem.graceMs) return { phase: 'Failed', reason: problem.reason, message: problem.message };
    recheckAfterMs = Math.min(recheckAfterMs ?? Infinity, problem.graceMs - waited);
  }
  return recheckAfterMs === undefined ? { phase: 'Running' } : { phase: 'Running', recheckAfterMs };
}

/** No pod: normal for a moment; past the grace, the Job's FailedCreate event says why (a missing ServiceAccount, a quota). */
function noPodHealth(now: number, since: number, failedCreate: string | undefined): JobHealth {
  if (failedCreate !== undefined) return { phase: 'Failed', ...podCreationRefusal(failedCreate) };
  const waited = now - since;
  if (waited < NO_POD_GRACE_MS) return { phase: 'Running', recheckAfterMs: NO_POD_GRACE_MS - waited };
  return { phase: 'Running', checkEvents: true };
}

/** The reason for a Job whose pods the API server refused, from the refusal's words. */
export function podCreationRefusal(message: string): { reason: string; message: string } {
  const reason = /exceeded quota|forbidden: exceeded/i.test(message)
    ? 'QuotaExceeded'
    : /serviceaccount .*not found|service account .*not found/i.test(message)
      ? 'ServiceAccountMissing'
      : 'PodCreationRefused';
  return { reason, message: `the scanner Job's pod could not be created: ${message}` };
}

/** Job failure reasons as the Scan's condition: the deadline gets its own reason, as in the embedded runtime. */
function jobFailure(condition: k8s.V1JobCondition): JobHealth {
  const reason = condition.reason === 'DeadlineExceeded' ? 'DeadlineExceeded' : 'JobFailed';
  return { phase: 'Failed', reason, message: `the scanner Job failed (${condition.reason ?? 'no reason'}): ${condition.message ?? 'no message'}` };
}
