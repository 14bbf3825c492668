/**
 * The Job and pod caches keep what Vigil reads of them (metadata, status),
 * not the spec with its pod template, nor managedFields: from the first list
 * and from every watch event, and for a Job this process just created.
 */
import { expect } from 'chai';
import { JobObserver } from '../../src/runtime/kubernetes/job-observer.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { FakeTimers } from '../support/fake-timers.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { waitFor } from '../support/wait.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';

const NS = 'vigil-acme';
const labels = { 'app.kubernetes.io/managed-by': 'vigil', 'vigil.dev/scan-id': 'scan-1' };
const template = {
  metadata: { labels },
  spec: { containers: [{ name: 'upload', image: 'ghcr.io/vigil-dev/vigil:0.1.0', env: [{ name: 'VIGIL_RESULT_FILES', value: 'nmap.xml' }] }] },
};
const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:status': {} } }];

describe('the Job observer caches: trimmed to what Vigil reads', () => {
  let server: FakeKubeApiServer;
  let observer: JobObserver;

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
  });

  afterEach(async () => {
    await observer?.stop();
    await server.stop();
  });

  it('keeps metadata and status of Jobs and pods, listed or watched, and drops spec and managedFields', async () => {
    server.setObject({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'listed-scanner', namespace: NS, labels, managedFields },
      spec: { backoffLimit: 0, template },
      status: { active: 1 },
    } as unknown as KubeObject);
    observer = new JobObserver({
      kubeConfig: kubeConfig(server),
      namespaces: fixedNamespaces([NS], new FakeTimers()),
      timers: new FakeTimers(),
      onError: () => undefined,
      followLogs: false,
    });
    await observer.start();
    const listed = observer.job(NS, 'listed-scanner')!;
    expect(listed.spec).to.equal(undefined);
    expect(listed.metadata?.managedFields).to.equal(undefined);
    expect(listed.metadata?.labels).to.deep.equal(labels);
    expect(listed.status).to.deep.equal({ active: 1 });

    server.setObject({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'listed-scanner', namespace: NS, labels, managedFields },
      spec: { backoffLimit: 0, template },
      status: { conditions: [{ type: 'Complete', status: 'True' }] },
    } as unknown as KubeObject);
    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'listed-scanner-pod', namespace: NS, labels, managedFields },
      spec: template.spec,
      status: { phase: 'Running' },
    } as unknown as KubeObject);
    await waitFor(
      async () => observer.job(NS, 'listed-scanner')?.status?.conditions?.length,
      (count) => count === 1,
      'the watched update',
    );
    await waitFor(
      async () => observer.podsOf('scan-1').length,
      (count) => count === 1,
      'the watched pod',
    );
    const watched = observer.job(NS, 'listed-scanner')!;
    expect([watched.spec, watched.metadata?.managedFields]).to.deep.equal([undefined, undefined]);
    const pod = observer.podsOf('scan-1')[0]!;
    expect([pod.spec, pod.metadata?.managedFields, pod.status?.phase]).to.deep.equal([undefined, undefined, 'Running']);

    observer.remember({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'created-scanner', namespace: NS, labels }, spec: { template } });
    expect(observer.job(NS, 'created-scanner')?.spec, 'a Job just created, before the cache shows it').to.equal(undefined);
  });
});

describe('the Job observer: a log follow that connects after its scan was forgotten', () => {
  let server: FakeKubeApiServer;
  let observer: JobObserver;
  const podLabels = { ...labels, 'vigil.dev/scan-type': 'nmap' };
  const runningPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'late-scanner-pod', namespace: NS, labels: podLabels },
    status: {
      phase: 'Pending',
      initContainerStatuses: [
        { name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } },
      ],
    },
  } as unknown as KubeObject;
  const isFollow = (request: { path: string; query: Record<string, string> }) => request.path.endsWith('/log') && request.query.follow === 'true';

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
    observer = new JobObserver({
      kubeConfig: kubeConfig(server),
      namespaces: fixedNamespaces([NS], new FakeTimers()),
      timers: new FakeTimers(),
      onError: () => undefined,
    });
    await observer.start();
  });

  afterEach(async () => {
    await observer.stop();
    await server.stop();
  });

  async function followHeld(): Promise<() => void> {
    const release = server.holdNext(isFollow);
    server.setObject(runningPod);
    await waitFor(
      async () => server.requests.filter(isFollow).length,
      (count) => count === 1,
      'the log follow sent',
    );
    return release;
  }

  it('keeps the stream of a scan still watched (the control)', async () => {
    const release = await followHeld();
    release();
    await waitFor(
      async () => server.logFollowsOpened,
      (count) => count === 1,
      'the follow answered',
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.openLogFollowers).to.equal(1);
    expect(observer.followedStreams).to.equal(1);
  });

  it('closes the stream at once, and keeps nothing of it, when the scan was forgotten before it connected', async () => {
    const release = await followHeld();
    observer.forget('scan-1');
    release();
    await waitFor(
      async () => server.logFollowsOpened,
      (count) => count === 1,
      'the follow answered',
    );
    await waitFor(
      async () => server.openLogFollowers,
      (count) => count === 0,
      'the late stream closed',
    );
    expect(observer.followedStreams).to.equal(0);
    expect(server.requests.filter(isFollow), 'not followed again for the same pod').to.have.length(1);
  });
});
