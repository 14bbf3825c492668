/**
 * The Job-side rules, table-driven (fixture objects in, verdict out): what a
 * scanner Job and its pods say about the Scan, and which stuck workloads fail
 * fast with a condition naming the cause (issue 13).
 */
import { expect } from 'chai';
import type * as k8s from '@kubernetes/client-node';
import { IMAGE_PULL_GRACE_MS, jobHealth, NO_POD_GRACE_MS, podCreationRefusal, type JobHealth } from '../../src/runtime/kubernetes/workload-health.js';

const job = (conditions: k8s.V1JobCondition[] = []): k8s.V1Job => ({ metadata: { name: 'scan-1-scanner', namespace: 'vigil-acme' }, status: { conditions } });

function pod(waiting?: { reason: string; message?: string }, container = 'scanner'): k8s.V1Pod {
  const state: k8s.V1ContainerState = waiting === undefined ? { running: { startedAt: new Date() } } : { waiting };
  return {
    metadata: { name: 'scan-1-scanner-abcde', namespace: 'vigil-acme' },
    status: {
      phase: 'Pending',
      initContainerStatuses: [{ name: container, image: 'registry.example/vigil/nmap:1', imageID: '', ready: false, restartCount: 0, state }],
    },
  };
}

interface Case {
  name: string;
  job: k8s.V1Job;
  pods: k8s.V1Pod[];
  /** How long ago every problem was first seen. */
  seenAgoMs: number;
  failedCreate?: string;
  expected: JobHealth;
}

const T0 = Date.parse('2026-11-25T00:00:00Z');

const cases: Case[] = [
  { name: 'a Job whose pod runs is Running with nothing to recheck', job: job(), pods: [pod()], seenAgoMs: 0, expected: { phase: 'Running' } },
  { name: 'a Complete Job is Complete', job: job([{ type: 'Complete', status: 'True' }]), pods: [], seenAgoMs: 0, expected: { phase: 'Complete' } },
  {
    name: 'a Job past its deadline fails as DeadlineExceeded',
    job: job([{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }]),
    pods: [],
    seenAgoMs: 0,
    expected: {
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'the scanner Job failed (DeadlineExceeded): Job was active longer than specified deadline',
    },
  },
  {
    name: 'a Job that used up its retries fails as JobFailed',
    job: job([{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }]),
    pods: [],
    seenAgoMs: 0,
    expected: { phase: 'Failed', reason: 'JobFailed', message: 'the scanner Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit' },
  },
  {
    name: 'an image that fails to pull is given the grace period, and looked at again when it ends',
    job: job(),
    pods: [pod({ reason: 'ErrImagePull', message: 'manifest unknown' })],
    seenAgoMs: 10_000,
    expected: { phase: 'Running', recheckAfterMs: IMAGE_PULL_GRACE_MS - 10_000 },
  },
  {
    name: 'ImagePullBackOff past the grace fails the Scan as ImagePullFailed, naming the container and the image',
    job: job(),
    pods: [pod({ reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.example/vigil/nmap:1"' })],
    seenAgoMs: IMAGE_PULL_GRACE_MS,
    expected: {
      phase: 'Failed',
      reason: 'ImagePullFailed',
      message:
        'container scanner cannot pull image registry.example/vigil/nmap:1: Back-off pulling image "registry.example/vigil/nmap:1"; check the image name, the registry and its pull secret',
    },
  },
  {
    name: 'CreateContainerConfigError fails at once as ContainerConfigInvalid with the kubelet’s words',
    job: job(),
    pods: [pod({ reason: 'CreateContainerConfigError', message: 'secret "scan-1-upload" not found' }, 'upload')],
    seenAgoMs: 0,
    expected: {
      phase: 'Failed',
      reason: 'ContainerConfigInvalid',
      message: 'container upload cannot be created (CreateContainerConfigError): secret "scan-1-upload" not found',
    },
  },
  {
    name: 'a Job without a pod yet waits for the no-pod grace',
    job: job(),
    pods: [],
    seenAgoMs: 5_000,
    expected: { phase: 'Running', recheckAfterMs: NO_POD_GRACE_MS - 5_000 },
  },
  {
    name: 'a Job without a pod past the grace asks for its events to be read',
    job: job(),
    pods: [],
    seenAgoMs: NO_POD_GRACE_MS,
    expected: { phase: 'Running', checkEvents: true },
  },
  {
    name: 'a Job whose pod a missing ServiceAccount refuses fails as ServiceAccountMissing',
    job: job(),
    pods: [],
    seenAgoMs: NO_POD_GRACE_MS,
    failedCreate:
      'Error creating: pods "scan-1-scanner-" is forbidden: error looking up service account vigil-acme/vigil-scanner: serviceaccount "vigil-scanner" not found',
    expected: {
      phase: 'Failed',
      reason: 'ServiceAccountMissing',
      message: `the scanner Job's pod could not be created: Error creating: pods "scan-1-scanner-" is forbidden: error looking up service account vigil-acme/vigil-scanner: serviceaccount "vigil-scanner" not found`,
    },
  },
  {
    name: 'a Job whose pod the namespace quota refuses fails as QuotaExceeded',
    job: job(),
    pods: [],
    seenAgoMs: NO_POD_GRACE_MS,
    failedCreate:
      'Error creating: pods "scan-1-scanner-x" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=4Gi, limited: limits.memory=4Gi',
    expected: {
      phase: 'Failed',
      ...podCreationRefusal(
        'Error creating: pods "scan-1-scanner-x" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=4Gi, limited: limits.memory=4Gi',
      ),
    },
  },
];

describe('Scanner Job health from cached objects (table)', () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const health = jobHealth({
        job: testCase.job,
        pods: testCase.pods,
        now: T0 + testCase.seenAgoMs,
        firstSeen: () => T0,
        ...(testCase.failedCreate === undefined ? {} : { failedCreate: testCase.failedCreate }),
      });
      expect(health).to.deep.equal(testCase.expected);
    });
  }

  it('names the quota refusal QuotaExceeded and anything else PodCreationRefused', () => {
    expect(podCreationRefusal('exceeded quota: compute').reason).to.equal('QuotaExceeded');
    expect(podCreationRefusal('admission webhook "policy.example" denied the request').reason).to.equal('PodCreationRefused');
  });
});
