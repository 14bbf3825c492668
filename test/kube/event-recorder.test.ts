/**
 * Kubernetes Events as client-go records them: a repeat counts up the Event
 * it repeats, similar events (same object, type and reason) past ten
 * messages are combined into one, a burst per object is let through and the
 * rest dropped until the bucket refills. Against the fake API server, time injected.
 */
import { expect } from 'chai';
import { FakeTimers } from '../support/fake-timers.js';
import {
  COMBINED_PREFIX,
  KubernetesEventRecorder,
  SIMILAR_MAX_EVENTS,
  SPAM_BURST,
  SPAM_REFILL_MS,
  SIMILAR_WINDOW_MS,
} from '../../src/runtime/kubernetes/event-recorder.js';
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
    recorder = new KubernetesEventRecorder({
      kubeConfig: kubeConfig(server),
      timers,
      onError: (error) => {
        throw error;
      },
    });
  });
  afterEach(() => server.stop());

  it('writes an Event on the Scan naming it, its reason and its message', async () => {
    recorder.normal(scan, 'JobCreated', 'created Job nightly-scanner');
    await recorder.flush();
    expect(events()).to.have.length(1);
    expect(events()[0]).to.deep.include({ type: 'Normal', reason: 'JobCreated', message: 'created Job nightly-scanner', count: 1 });
    expect(events()[0]!.involvedObject).to.include({ kind: 'Scan', name: 'nightly', uid: 'uid-1' });
  });

  it('gives every Event a name of its own, even for many in one millisecond (the clock stands still here)', async () => {
    // 200 objects, a burst of 25 each: with only 2 random bytes to tell them apart, some object's burst
    // shared a name (the second create refused, the Event lost) in more than half of such runs.
    for (let object = 0; object < 200; object++) {
      const other = { ...scan, metadata: { ...scan.metadata, name: `scan-${object}`, uid: `uid-${object}` } };
      for (let index = 0; index < SPAM_BURST; index++) recorder.normal(other, `Step${index}`, `step ${index}`);
    }
    await recorder.flush();
    expect(events()).to.have.length(200 * SPAM_BURST);
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
    expect(
      events()
        .map((event) => event.count)
        .sort(),
    ).to.deep.equal([1, 2]);
  });

  it('lets a burst through per object, drops the rest, and lets one more through per refill period', async () => {
    for (let index = 0; index < SPAM_BURST + 10; index++) recorder.normal(scan, `Step${index}`, `step ${index}`); // reasons apart: not similar events
    await recorder.flush();
    expect(events()).to.have.length(SPAM_BURST);
    timers.advance(SPAM_REFILL_MS);
    recorder.normal(scan, 'Progress', 'after the refill');
    recorder.normal(scan, 'Progress', 'one too many');
    await recorder.flush();
    expect(events().map((event) => event.message))
      .to.include('after the refill')
      .and.not.include('one too many');
    recorder.normal({ ...scan, metadata: { ...scan.metadata, name: 'other', uid: 'uid-2' } }, 'JobCreated', 'another object has its own bucket');
    await recorder.flush();
    expect(events()).to.have.length(SPAM_BURST + 2);
  });

  describe('similar events (client-go EventAggregator): same object, type and reason, other messages', () => {
    type Step = { object?: 'other'; type?: 'Normal' | 'Warning'; reason?: string; message: string } | { advance: number };
    const distinct = (count: number, from = 0, reason = 'BackOff'): Step[] =>
      Array.from({ length: count }, (_, index) => ({ reason, message: `try ${from + index}` }));
    const cases: Array<{ name: string; steps: Step[]; expected: Array<{ reason: string; message: string; count: number; name?: string }> }> = [
      {
        name: `${SIMILAR_MAX_EVENTS - 1} distinct messages stay ${SIMILAR_MAX_EVENTS - 1} Events`,
        steps: distinct(SIMILAR_MAX_EVENTS - 1),
        expected: distinct(SIMILAR_MAX_EVENTS - 1).map((step) => ({ reason: 'BackOff', message: (step as { message: string }).message, count: 1 })),
      },
      {
        name: `the ${SIMILAR_MAX_EVENTS}th distinct message is recorded combined`,
        steps: distinct(SIMILAR_MAX_EVENTS),
        expected: [
          ...distinct(SIMILAR_MAX_EVENTS - 1).map((step) => ({ reason: 'BackOff', message: (step as { message: string }).message, count: 1 })),
          { reason: 'BackOff', message: `${COMBINED_PREFIX}try ${SIMILAR_MAX_EVENTS - 1}`, count: 1 },
        ],
      },
      {
        name: 'further similar events count up the one combined Event, whose message follows the latest',
        steps: distinct(SIMILAR_MAX_EVENTS + 3),
        expected: [
          ...distinct(SIMILAR_MAX_EVENTS - 1).map((step) => ({ reason: 'BackOff', message: (step as { message: string }).message, count: 1 })),
          { reason: 'BackOff', message: `${COMBINED_PREFIX}try ${SIMILAR_MAX_EVENTS + 2}`, count: 4 },
        ],
      },
      {
        name: 'one message repeated is one Event counted up, never combined',
        steps: Array.from({ length: SIMILAR_MAX_EVENTS + 5 }, () => ({ reason: 'BackOff', message: 'same' })),
        expected: [{ reason: 'BackOff', message: 'same', count: SIMILAR_MAX_EVENTS + 5 }],
      },
      {
        name: 'other reasons, types or objects are not similar',
        steps: [
          ...distinct(6, 0, 'BackOff'),
          ...distinct(6, 0, 'Pulling'),
          { type: 'Warning', reason: 'BackOff', message: 'warned' },
          { object: 'other', reason: 'BackOff', message: 'elsewhere' },
        ],
        expected: [
          ...distinct(6, 0, 'BackOff').map((step) => ({ reason: 'BackOff', message: (step as { message: string }).message, count: 1 })),
          ...distinct(6, 0, 'Pulling').map((step) => ({ reason: 'Pulling', message: (step as { message: string }).message, count: 1 })),
          { reason: 'BackOff', message: 'warned', count: 1 },
          { reason: 'BackOff', message: 'elsewhere', count: 1, name: 'other' },
        ],
      },
      {
        name: 'the count of distinct messages starts again after the window',
        steps: [...distinct(SIMILAR_MAX_EVENTS - 1), { advance: SIMILAR_WINDOW_MS }, ...distinct(SIMILAR_MAX_EVENTS - 1, 100)],
        expected: [...distinct(SIMILAR_MAX_EVENTS - 1), ...distinct(SIMILAR_MAX_EVENTS - 1, 100)].map((step) => ({
          reason: 'BackOff',
          message: (step as { message: string }).message,
          count: 1,
        })),
      },
    ];
    for (const testCase of cases) {
      it(testCase.name, async () => {
        for (const step of testCase.steps) {
          if ('advance' in step) {
            timers.advance(step.advance);
            continue;
          }
          const object = step.object === undefined ? scan : { ...scan, metadata: { ...scan.metadata, name: step.object, uid: 'uid-2' } };
          (step.type === 'Warning' ? recorder.warning : recorder.normal).call(recorder, object, step.reason ?? 'BackOff', step.message);
        }
        await recorder.flush();
        const written = events().map((event) => ({
          reason: event.reason,
          message: event.message,
          count: event.count,
          ...(event.involvedObject.name === 'nightly' ? {} : { name: event.involvedObject.name }),
        }));
        const order = (list: Array<{ reason: string; message: string }>) =>
          [...list].sort((a, b) => `${a.reason} ${a.message}`.localeCompare(`${b.reason} ${b.message}`));
        expect(order(written)).to.deep.equal(order(testCase.expected));
      });
    }
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
