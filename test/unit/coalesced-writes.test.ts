/**
 * The per-key write queue under both custom-resource mirrors
 * (src/runtime/kubernetes/coalesced-writes.ts): serialised and coalesced per
 * key, started after the caller's synchronous code, retried with backoff on
 * the injected timers.
 */
import { expect } from 'chai';
import { FakeTimers } from '../support/fake-timers.js';
import { CoalescedWrites } from '../../src/runtime/kubernetes/coalesced-writes.js';

/** A promise the test resolves when it chooses: a write that is still in flight until then. */
function gate(): { promise: Promise<void>; open: () => void } {
  const opened: { open?: () => void } = {};
  const promise = new Promise<void>((resolve) => (opened.open = resolve));
  return { promise, open: () => opened.open!() };
}

describe('CoalescedWrites', () => {
  it('sends a burst that arrives while a write is in flight as one write of the latest request', async () => {
    const first = gate();
    const sent: string[] = [];
    const writes = new CoalescedWrites<string>({
      write: async (key, value) => {
        sent.push(`${key}=${value}`);
        if (value === 'a') await first.promise;
      },
      onError: () => undefined,
    });
    writes.request('k', 'a');
    await Promise.resolve();
    await Promise.resolve();
    for (const value of ['b', 'c', 'd']) writes.request('k', value);
    writes.request('other', 'x');
    first.open();
    await writes.flush();
    expect(sent).to.deep.equal(['k=a', 'other=x', 'k=d']);
  });

  it('merges queued requests when told how', async () => {
    const sent: number[][] = [];
    const writes = new CoalescedWrites<number[]>({ write: async (_key, value) => void sent.push(value), onError: () => undefined, merge: (a, b) => [...a, ...b] });
    writes.request('k', [1]);
    writes.request('k', [2]);
    await writes.flush();
    expect(sent).to.deep.equal([[1, 2]]);
  });

  it('starts writing only after the caller returns, so a write reads what the caller committed', async () => {
    let committed = 'before';
    const seen: string[] = [];
    const writes = new CoalescedWrites<string>({ write: async () => void seen.push(committed), onError: () => undefined });
    writes.request('k', 'x');
    committed = 'after';
    await writes.flush();
    expect(seen).to.deep.equal(['after']);
  });

  it('reports a failure and sends the request again after a backoff, folding in a newer one', async () => {
    const timers = new FakeTimers();
    const errors: string[] = [];
    const sent: number[][] = [];
    let failures = 2;
    const writes = new CoalescedWrites<number[]>({
      write: async (_key, value) => {
        sent.push(value);
        if (failures-- > 0) throw new Error('API server unavailable');
      },
      onError: (key, error) => errors.push(`${key}: ${(error as Error).message}`),
      merge: (a, b) => [...a, ...b],
      retry: { timers, baseMs: 1000, maxMs: 60_000 },
    });
    writes.request('k', [1]);
    await writes.flush();
    expect(errors).to.deep.equal(['k: API server unavailable']);
    expect(timers.pending).to.equal(1);
    timers.advance(999);
    await writes.flush();
    expect(sent).to.have.length(1);
    timers.advance(1);
    await writes.flush();
    expect(sent).to.deep.equal([[1], [1]]);
    writes.request('k', [2]); // arrives while the second retry (2 s) waits: both go at once
    await writes.flush();
    expect(sent).to.deep.equal([[1], [1], [1, 2]]);
    expect(timers.pending).to.equal(0);
  });

  it('cancels waiting retries on stop and retries nothing after it, and settles one key without waiting for the others', async () => {
    const timers = new FakeTimers();
    const slow = gate();
    const writes = new CoalescedWrites<string>({
      write: async (key) => {
        if (key === 'failing') throw new Error('no');
        if (key === 'slow') await slow.promise;
      },
      onError: () => undefined,
      retry: { timers, baseMs: 1000, maxMs: 60_000 },
    });
    writes.request('failing', 'x');
    writes.request('slow', 'y');
    writes.request('quick', 'z');
    await writes.settled('quick');
    await writes.settled('failing');
    expect(timers.pending).to.equal(1);
    writes.stop();
    expect(timers.pending).to.equal(0);
    writes.request('failing', 'again'); // while shutting down: attempted once, not retried
    slow.open();
    await writes.flush();
    expect(timers.pending).to.equal(0);
  });
});
