/**
 * requestTurns: requests that arrive together start in later turns of the
 * event loop, as many per turn as fit in its time slice, so the loop polls
 * (and answers /healthz) after any heavy one instead of running all their
 * synchronous work back to back.
 */
import { expect } from 'chai';
import type { NextFunction, Request, Response } from 'express';
import { yieldToEventLoop } from '../../src/app/event-loop.js';
import { requestTurns } from '../../src/http/request-turns.js';
import { loopbackConnection } from '../support/loopback-connection.js';

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

  describe('beside long work that yields (yieldToEventLoop)', () => {
    const connection = loopbackConnection();

    /** Long work whose steps each hold the loop `ms` and write a byte the server reads in the loop's next poll. */
    const longWork = async (order: string[], name: string, ms: number, during?: (step: number) => void): Promise<void> => {
      for (let step = 1; step <= 3; step++) {
        await yieldToEventLoop();
        order.push(`${name}${step}`);
        during?.(step);
        connection.client.write('x', () => undefined);
        for (const until = performance.now() + ms; performance.now() < until;);
      }
    };

    for (const [name, ms, expected] of [
      // A heavy step (b1) ran in the iteration the request arrived in: the request starts in the next, after a poll, and the next step
      // (a2) waits for the one after.
      [
        'starts a request that arrives with a heavy step in the next iteration, and the next step waits for it',
        20,
        ['a1', 'read', 'b1', 'read', 'request', 'read', 'a2'],
      ],
      // A light one shares its iteration with the request, as before.
      ['starts a request in the same iteration as a light step', 0, ['a1', 'read', 'b1', 'request', 'read', 'a2']],
    ] as const) {
      it(name, async () => {
        const gate = requestTurns(10);
        const order: string[] = [];
        // Two pieces of long work: one step per iteration, a's and b's in turn. The request arrives as requests do, in the poll phase:
        // the server reads the byte a1 sends in the next iteration, whose check phase runs b1 before the requests that arrived.
        let requested: Promise<void> | undefined;
        connection.accepted.on('data', (bytes: Buffer) => {
          order.push('read');
          if (bytes.includes('r'))
            requested = new Promise<void>((resolve) =>
              started(gate, () => {
                order.push('request');
                connection.client.write('x', () => undefined);
                resolve();
              }),
            );
        });
        await Promise.all([longWork(order, 'a', ms, (step) => step === 1 && connection.client.write('r', () => undefined)), longWork(order, 'b', ms)]);
        await requested;
        const from = order.indexOf('a1');
        expect(order.slice(from, from + expected.length)).to.deep.equal(expected);
      });
    }
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
