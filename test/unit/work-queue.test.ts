import { expect } from 'chai';
import { LONGEST_NODE_TIMEOUT_MS, systemTimers } from '../../src/app/controller/timer.js';
import { FakeTimers } from '../support/fake-timers.js';
import { WorkQueue, type ReconcileResult, type WorkQueueOptions } from '../../src/app/controller/work-queue.js';
import type { Clock } from '../../src/domain/clock.js';

/** Lets every queued promise continuation run; no real time passes. */
function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** A reconcile that records which keys run, how many run at once, and waits until the test releases each call. */
class ControlledReconcile {
  readonly calls: string[] = [];
  readonly maxActivePerKey = new Map<string, number>();
  maxActive = 0;
  private readonly active = new Map<string, number>();
  private readonly gates: Deferred[] = [];

  readonly reconcile = async (key: string): Promise<void> => {
    this.calls.push(key);
    this.enter(key);
    const gate = deferred();
    this.gates.push(gate);
    await gate.promise;
    this.active.set(key, this.active.get(key)! - 1);
  };

  get activeCount(): number {
    return [...this.active.values()].reduce((sum, count) => sum + count, 0);
  }

  releaseOldest(): void {
    this.gates.shift()!.resolve();
  }

  private enter(key: string): void {
    const now = (this.active.get(key) ?? 0) + 1;
    this.active.set(key, now);
    this.maxActivePerKey.set(key, Math.max(now, this.maxActivePerKey.get(key) ?? 0));
    this.maxActive = Math.max(this.maxActive, this.activeCount);
  }
}

describe('WorkQueue', () => {
  let timers: FakeTimers;
  let errors: Array<{ key: string; error: unknown }>;

  function newQueue(options: Partial<WorkQueueOptions> = {}): WorkQueue {
    return new WorkQueue({ timers, onError: (key, error) => errors.push({ key, error }), ...options });
  }

  async function takeAll(queue: WorkQueue): Promise<string[]> {
    const keys: string[] = [];
    while (queue.depth > 0) keys.push((await queue.get())!);
    return keys;
  }

  beforeEach(() => {
    timers = new FakeTimers();
    errors = [];
  });

  it('puts a key added first ahead of the waiting keys, moving it there when it waits already, and still only once', async () => {
    const queue = newQueue();
    for (const key of ['a', 'b', 'c']) queue.add(key);
    queue.addFirst('x');
    queue.addFirst('c');
    queue.addFirst('c');
    expect(await takeAll(queue)).to.deep.equal(['c', 'x', 'a', 'b']);
  });

  it('queues a key added several times only once, in first-arrival order', async () => {
    const queue = newQueue();
    for (const key of ['ns/a', 'ns/a', 'ns/b', 'ns/a', 'ns/b']) queue.add(key);
    expect(queue.depth).to.equal(2);
    expect(await takeAll(queue)).to.deep.equal(['ns/a', 'ns/b']);
  });

  it('runs a key added during its own reconcile exactly once more afterwards, never concurrently', async () => {
    const queue = newQueue();
    const controlled = new ControlledReconcile();
    void queue.run(4, controlled.reconcile);
    queue.add('ns/a');
    await flushPromises();
    queue.add('ns/a');
    queue.add('ns/a');
    await flushPromises();
    expect(controlled.calls).to.deep.equal(['ns/a']);

    controlled.releaseOldest();
    await flushPromises();
    expect(controlled.calls).to.deep.equal(['ns/a', 'ns/a']);
    controlled.releaseOldest();
    await flushPromises();

    expect(controlled.calls).to.have.length(2);
    expect(controlled.maxActivePerKey.get('ns/a')).to.equal(1);
    expect(queue.inFlight).to.equal(0);
  });

  it('hands a key added while in flight to no one until done is called', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    const key = (await queue.get())!;
    queue.add('ns/a');
    expect(queue.depth).to.equal(0);
    queue.done(key);
    expect(queue.depth).to.equal(1);
  });

  it('never runs more reconciles at once than it has workers', async () => {
    const queue = newQueue();
    const controlled = new ControlledReconcile();
    void queue.run(3, controlled.reconcile);
    for (let i = 0; i < 10; i += 1) queue.add(`ns/key-${i}`);
    await flushPromises();
    expect(controlled.activeCount).to.equal(3);

    for (let released = 0; released < 10; released += 1) {
      controlled.releaseOldest();
      await flushPromises();
    }
    expect(controlled.calls).to.have.length(10);
    expect(controlled.maxActive).to.equal(3);
  });

  it('makes an addAfter key ready at its delay and not a millisecond before', () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 1000);
    timers.advance(999);
    expect(queue.depth).to.equal(0);
    timers.advance(1);
    expect(queue.depth).to.equal(1);
    expect(queue.waiting).to.equal(0);
  });

  it('keeps the earliest time when addAfter names the same key twice, in either order', async () => {
    for (const delays of [
      [1000, 5000],
      [5000, 1000],
    ]) {
      const queue = newQueue();
      for (const delay of delays) queue.addAfter('ns/a', delay);
      expect(timers.pending).to.equal(1);
      timers.advance(1000);
      expect(await takeAll(queue)).to.deep.equal(['ns/a']);
      queue.done('ns/a');
      timers.advance(10_000);
      expect(queue.depth).to.equal(0);
    }
  });

  it('hands out a key at once when add comes before its addAfter delay', async () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 1000);
    queue.add('ns/a');
    expect(await takeAll(queue)).to.deep.equal(['ns/a']);
  });

  it('treats a zero, negative or NaN delay as an immediate add', () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 0);
    queue.addAfter('ns/b', -5);
    queue.addAfter('ns/c', Number.NaN);
    expect(queue.depth).to.equal(3);
    expect(timers.pending).to.equal(0);
  });

  it('backs a failing key off 100, 200, 400 ms and so on up to the cap, and forget starts it over', async () => {
    const queue = newQueue({ backoff: { maxMs: 1000 } });
    const expectBackoff = async (delayMs: number): Promise<void> => {
      queue.addRateLimited('ns/a');
      timers.advance(delayMs - 1);
      expect(queue.depth, `before ${delayMs} ms`).to.equal(0);
      timers.advance(1);
      expect(queue.depth, `at ${delayMs} ms`).to.equal(1);
      queue.done((await queue.get())!);
    };
    for (const delayMs of [100, 200, 400, 800, 1000, 1000]) await expectBackoff(delayMs);
    expect(queue.failures('ns/a')).to.equal(6);
    expect(queue.retries).to.equal(6);

    queue.forget('ns/a');
    expect(queue.failures('ns/a')).to.equal(0);
    await expectBackoff(100);
  });

  it('caps the default backoff at five minutes', async () => {
    const queue = newQueue();
    for (let failure = 0; failure < 14; failure += 1) {
      queue.addRateLimited('ns/a');
      timers.advance(5 * 60_000);
      expect(queue.depth, `after failure ${failure + 1}`).to.equal(1);
      queue.done((await queue.get())!);
    }
    queue.addRateLimited('ns/a');
    timers.advance(5 * 60_000 - 1);
    expect(queue.depth).to.equal(0);
    timers.advance(1);
    expect(queue.depth).to.equal(1);
  });

  it('keeps error backoff apart from timed requeues for the failure count', () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 30_000);
    expect(queue.failures('ns/a')).to.equal(0);
    queue.addRateLimited('ns/a');
    timers.advance(100);
    expect(queue.depth).to.equal(1);
    expect(queue.failures('ns/a')).to.equal(1);
  });

  it('retries a throwing reconcile with backoff, reports each error with its key, and forgets the failures on success', async () => {
    const queue = newQueue();
    const failure = new Error('api server unavailable');
    let calls = 0;
    void queue.run(1, async () => {
      calls += 1;
      if (calls <= 2) throw failure;
    });
    queue.add('ns/a');
    await flushPromises();
    expect(calls).to.equal(1);
    expect(errors).to.deep.equal([{ key: 'ns/a', error: failure }]);
    expect(queue.failures('ns/a')).to.equal(1);

    timers.advance(99);
    await flushPromises();
    expect(calls).to.equal(1);
    timers.advance(1);
    await flushPromises();
    expect(calls).to.equal(2);

    timers.advance(199);
    await flushPromises();
    expect(calls).to.equal(2);
    timers.advance(1);
    await flushPromises();
    expect(calls).to.equal(3);
    expect(errors.map(({ key }) => key)).to.deep.equal(['ns/a', 'ns/a']);
    expect(queue.failures('ns/a')).to.equal(0);
    expect(queue.retries).to.equal(2);
  });

  it('keeps working when the error reporter itself throws', async () => {
    const queue = newQueue({
      onError: () => {
        throw new Error('reporter broke');
      },
    });
    let calls = 0;
    void queue.run(1, async () => {
      calls += 1;
      if (calls === 1) throw new Error('first reconcile fails');
    });
    queue.add('ns/a');
    await flushPromises();
    timers.advance(100);
    await flushPromises();
    expect(calls).to.equal(2);
  });

  it('requeues a key after the requeueAfterMs its reconcile returned, without counting a failure', async () => {
    const queue = newQueue();
    const results: ReconcileResult[] = [{ requeueAfterMs: 5000 }, undefined];
    let calls = 0;
    void queue.run(2, async () => results[calls++]);
    queue.add('ns/a');
    await flushPromises();
    expect(calls).to.equal(1);
    expect(queue.failures('ns/a')).to.equal(0);

    timers.advance(4999);
    await flushPromises();
    expect(calls).to.equal(1);
    timers.advance(1);
    await flushPromises();
    expect(calls).to.equal(2);

    timers.advance(60_000);
    await flushPromises();
    expect(calls).to.equal(2);
  });

  it('waits for in-flight reconciles on shutDown, hands out nothing more, cancels timers and ignores later adds', async () => {
    const queue = newQueue();
    const controlled = new ControlledReconcile();
    let workersStopped = false;
    void queue.run(1, controlled.reconcile).then(() => (workersStopped = true));
    queue.add('ns/a');
    queue.add('ns/b');
    queue.addAfter('ns/c', 1000);
    await flushPromises();

    let drained = false;
    void queue.shutDown().then(() => (drained = true));
    queue.add('ns/d');
    queue.addAfter('ns/e', 10);
    queue.addRateLimited('ns/f');
    await flushPromises();
    expect(drained).to.equal(false);
    expect(queue.depth).to.equal(0);
    expect(timers.pending).to.equal(0);
    expect(queue.failures('ns/f')).to.equal(0);

    controlled.releaseOldest();
    await flushPromises();
    expect(drained).to.equal(true);
    expect(workersStopped).to.equal(true);
    expect(controlled.calls).to.deep.equal(['ns/a']);
    expect(await queue.get()).to.equal(undefined);
  });

  it('resolves shutDown at once when nothing is in flight', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    await queue.shutDown();
    expect(queue.isShuttingDown).to.equal(true);
    expect(queue.depth).to.equal(0);
  });

  it('refuses a worker count that is not a positive integer', () => {
    const queue = newQueue();
    expect(() => queue.run(0, async () => undefined)).to.throw(RangeError);
    expect(() => queue.run(1.5, async () => undefined)).to.throw(RangeError);
  });

  it('processes each of 1000 keys exactly once, even when every key is added twice', async () => {
    const queue = newQueue();
    const counts = new Map<string, number>();
    const keys = Array.from({ length: 1000 }, (_, i) => `ns/scan-${i}`);
    for (const key of [...keys, ...keys]) queue.add(key);
    void queue.run(8, async (key) => {
      counts.set(key, (counts.get(key) ?? 0) + 1);
    });
    await flushPromises();
    expect(counts.size).to.equal(1000);
    expect([...counts.values()].every((count) => count === 1)).to.equal(true);
    expect(queue.depth).to.equal(0);
    expect(queue.inFlight).to.equal(0);
  });
});

describe('FakeTimers', () => {
  it('fires due timers in time order, each seeing its own due time, and leaves later ones', () => {
    const timers = new FakeTimers(0);
    const fired: Array<[string, number]> = [];
    timers.setTimeout(() => fired.push(['late', timers.now()]), 300);
    timers.setTimeout(() => fired.push(['early', timers.now()]), 100);
    timers.setTimeout(() => fired.push(['never', timers.now()]), 1000);
    timers.advance(500);
    expect(fired).to.deep.equal([
      ['early', 100],
      ['late', 300],
    ]);
    expect(timers.now()).to.equal(500);
    expect(timers.pending).to.equal(1);
  });

  it('fires a timer scheduled by a callback within the same advance, and never a cleared one', () => {
    const timers = new FakeTimers(0);
    const fired: string[] = [];
    const cleared = timers.setTimeout(() => fired.push('cleared'), 50);
    timers.setTimeout(() => {
      fired.push('first');
      timers.setTimeout(() => fired.push('chained'), 100);
    }, 100);
    timers.clearTimeout(cleared);
    timers.advance(200);
    expect(fired).to.deep.equal(['first', 'chained']);
  });
});

interface RecordedNodeTimers {
  armed: Array<{ fire: () => void; delayMs: number }>;
  cleared: unknown[];
}

/** Records Node's timer calls instead of waiting on them, so nothing here sleeps. */
function withRecordedNodeTimers(body: (recorded: RecordedNodeTimers) => void): void {
  const recorded: RecordedNodeTimers = { armed: [], cleared: [] };
  const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout } = globalThis;
  globalThis.setTimeout = ((fire: () => void, delayMs: number) => {
    recorded.armed.push({ fire, delayMs });
    return recorded.armed.length;
  }) as unknown as typeof globalThis.setTimeout;
  globalThis.clearTimeout = ((handle: unknown) => recorded.cleared.push(handle)) as typeof globalThis.clearTimeout;
  try {
    body(recorded);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
  }
}

describe('systemTimers', () => {
  it('reads now from the injected clock', () => {
    const clock: Clock = { now: () => new Date('2026-03-01T00:00:00.000Z') };
    expect(systemTimers(clock).now()).to.equal(Date.parse('2026-03-01T00:00:00.000Z'));
  });

  it('waits out a delay longer than Node can hold in one timeout in steps, firing only after the last', () => {
    let fired = false;
    withRecordedNodeTimers(({ armed }) => {
      systemTimers().setTimeout(() => (fired = true), LONGEST_NODE_TIMEOUT_MS * 2 + 5);
      armed[0]!.fire();
      armed[1]!.fire();
      expect(fired).to.equal(false);
      armed[2]!.fire();
      expect(armed.map(({ delayMs }) => delayMs)).to.deep.equal([LONGEST_NODE_TIMEOUT_MS, LONGEST_NODE_TIMEOUT_MS, 5]);
    });
    expect(fired).to.equal(true);
  });

  it('cancels whichever step of a long delay is currently armed', () => {
    withRecordedNodeTimers(({ armed, cleared }) => {
      const timers = systemTimers();
      const handle = timers.setTimeout(() => undefined, LONGEST_NODE_TIMEOUT_MS + 1);
      armed[0]!.fire();
      timers.clearTimeout(handle);
      expect(cleared).to.deep.equal([2]);
    });
  });
});
