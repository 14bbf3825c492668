/**
 * Kubernetes Events as client-go records them: a repeat counts up the Event
 * it repeats, a burst per object is let through and the rest dropped until
 * the bucket refills. Against the fake API server, time injected.
 */
import { expect } from 'chai';
import { FakeTimers } from '../support/fake-timers.js';
import { KubernetesEventRecorder, SPAM_BURST, SPAM_REFILL_MS, SIMILAR_WINDOW_MS } from '../../src/runtime/kubernetes/event-recorder.js';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';

describe('Kubernetes Events (client-go style recorder)', () => {
  let server: FakeKubeApiServer;
  let timers: FakeTimers;
  let recorder: KubernetesEventRecorder;
  const scan = { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name: 'nightly', namespace: 'vigil-acme', uid: 'uid-1' } };
  type EventObject = { involvedObject: { kind: string; name: string; uid: string }; reason: string; message: string; type: string; count: number };
  const events = () => server.listObjects('v1', 'Event', 'vigil-acme') as unknown as EventObject[];

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
    timers = new FakeTimers();
    recorder = new KubernetesEventRecorder({ kubeConfig: kubeConfig(server), timers, onError: (error) => { throw error; } });
  });
  afterEach(() => server.stop());

  it('writes an Event on the Scan naming it, its reason and its message', async () => {
    recorder.normal(scan, 'JobCreated', 'created Job nightly-scanner');
    await recorder.flush();
    expect(events()).to.have.length(1);
    expect(events()[0]).to.deep.include({ type: 'Normal', reason: 'JobCreated', message: 'created Job nightly-scanner', count: 1 });
    expect(events()[0]!.involvedObject).to.include({ kind: 'Scan', name: 'nightly', uid: 'uid-1' });
  });

  it('counts a repeat within the window up on the same Event, and starts a new one after it', async () => {
    recorder.warning(scan, 'ImagePullFailed', 'cannot pull');
    await recorder.flush();
    recorder.warning(scan, 'ImagePullFailed', 'cannot pull');
    await recorder.flush();
    expect(events().map((event) => event.count)).to.deep.equal([2]);
    timers.advance(SIMILAR_WINDOW_MS);
    recorder.warning(scan, 'ImagePullFailed', 'cannot pull');
    await recorder.flush();
    expect(events().map((event) => event.count).sort()).to.deep.equal([1, 2]);
  });

  it('lets a burst through per object, drops the rest, and lets one more through per refill period', async () => {
    for (let index = 0; index < SPAM_BURST + 10; index++) recorder.normal(scan, 'Progress', `step ${index}`);
    await recorder.flush();
    expect(events()).to.have.length(SPAM_BURST);
    timers.advance(SPAM_REFILL_MS);
    recorder.normal(scan, 'Progress', 'after the refill');
    recorder.normal(scan, 'Progress', 'one too many');
    await recorder.flush();
    expect(events().map((event) => event.message)).to.include('after the refill').and.not.include('one too many');
    recorder.normal({ ...scan, metadata: { ...scan.metadata, name: 'other', uid: 'uid-2' } }, 'JobCreated', 'another object has its own bucket');
    await recorder.flush();
    expect(events()).to.have.length(SPAM_BURST + 2);
  });

  it('never throws into the caller when the API server refuses an Event', async () => {
    const errors: unknown[] = [];
    recorder = new KubernetesEventRecorder({ kubeConfig: kubeConfig(server), timers, onError: (error) => errors.push(error) });
    server.failNext((request) => request.path.endsWith('/events'), 403);
    recorder.normal(scan, 'JobCreated', 'refused');
    await recorder.flush();
    expect(errors).to.have.length(1);
    expect(events()).to.deep.equal([]);
  });
});
