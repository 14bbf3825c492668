/**
 * requestTurns: requests that arrive together start in later turns of the
 * event loop, as many per turn as fit in its time slice, so the loop polls
 * (and answers /healthz) after any heavy one instead of running all their
 * synchronous work back to back.
 */
import { expect } from 'chai';
import type { NextFunction, Request, Response } from 'express';
import { requestTurns } from '../../src/http/request-turns.js';

describe('requests started in turns of the event loop', () => {
  const started = (gate: ReturnType<typeof requestTurns>, next: () => void) => gate({} as Request, {} as Response, next as NextFunction);

  it('starts requests that arrive in one turn in later turns, in arrival order, one each when one fills the slice', async () => {
    // A slice of 0 ms: every request fills it, as a heavy one does.
    const gate = requestTurns(0);
    const order: string[] = [];
    const done = new Promise<void>((resolve) => {
      for (const name of ['a', 'b', 'c'])
        started(gate, () => {
          order.push(name);
          // Work the first request schedules for the next turn runs before the second request starts.
          if (name === 'a') setImmediate(() => order.push('next turn'));
          if (name === 'c') resolve();
        });
    });
    expect(order, 'nothing starts in the turn the requests arrived in').to.deep.equal([]);
    await done;
    expect(order).to.deep.equal(['a', 'next turn', 'b', 'c']);
  });

  it('starts as many in one turn as fit in the slice: cheap requests keep going together', async () => {
    const gate = requestTurns(60_000);
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      for (const name of ['a', 'b', 'c'])
        started(gate, () => {
          order.push(name);
          if (name === 'a') setImmediate(() => order.push('next turn'));
          if (name === 'c') resolve();
        });
    });
    expect(order).to.deep.equal(['a', 'b', 'c']);
  });

  it("counts a request's work after its first await against the slice, as a heavy list's SQLite work comes after it", async () => {
    const gate = requestTurns(5);
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      for (const name of ['a', 'b'])
        started(gate, () => {
          order.push(name);
          if (name === 'b') resolve();
          else
            void Promise.resolve().then(() => {
              setImmediate(() => order.push('next turn'));
              for (const until = performance.now() + 20; performance.now() < until;);
            });
        });
    });
    expect(order).to.deep.equal(['a', 'next turn', 'b']);
  });

  it('keeps starting the others when one throws', async () => {
    const gate = requestTurns(0);
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    const original = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', listener);
    try {
      await new Promise<void>((resolve) => {
        started(gate, () => {
          throw new Error('a handler that throws');
        });
        started(gate, resolve);
      });
    } finally {
      process.removeListener('uncaughtException', listener);
      for (const handler of original) process.on('uncaughtException', handler);
    }
    expect(uncaught.map((error) => (error as Error).message)).to.deep.equal(['a handler that throws']);
  });
});
