/**
 * yieldToEventLoop() lets the loop poll its sockets before the work goes on,
 * even when the work runs in an I/O callback (the poll phase): there one
 * setImmediate runs in the same iteration, before any poll, and two steps of
 * an upload ran back to back, 83 ms with no request served (bench/scale.ts).
 * And one waiting step goes on per iteration, whatever yields: a scan PDF's
 * layout and a deletion's recompute ran back to back, 109 ms.
 */
import { expect } from 'chai';
import { stat } from 'node:fs';
import { yieldToEventLoop } from '../../src/app/event-loop.js';
import { loopbackConnection } from '../support/loopback-connection.js';

describe('a yield to the event loop', () => {
  const connection = loopbackConnection();

  for (const [where, run] of [
    ['an I/O callback (the poll phase)', (step: () => void) => stat(import.meta.dirname, step)],
    ['an immediate (the check phase)', (step: () => void) => setImmediate(step)],
  ] as const) {
    it(`reads what a socket received before it goes on, from ${where}`, async () => {
      const order: string[] = [];
      connection.accepted.on('data', () => order.push('socket read'));
      await new Promise<void>((resolve) =>
        run(() => {
          // On loopback the bytes are in the peer's queue when write() returns: ready before the yield.
          connection.client.write('x', () => undefined);
          void yieldToEventLoop().then(() => {
            order.push('work goes on');
            resolve();
          });
        }),
      );
      expect(order).to.deep.equal(['socket read', 'work goes on']);
    });
  }

  it('lets one waiting step go on per iteration, each piece of work in turn, with a poll for sockets between any two', async () => {
    const order: string[] = [];
    connection.accepted.on('data', () => order.push('read'));
    const work = async (name: string): Promise<void> => {
      for (let step = 1; step <= 3; step++) {
        order.push(`${name}${step}`);
        connection.client.write('x', () => undefined);
        await yieldToEventLoop();
      }
    };
    await Promise.all([work('a'), work('b')]);
    // Both first steps run before either yields; from then on every step's byte is read before the next step of either.
    expect(order.slice(0, 9)).to.deep.equal(['a1', 'b1', 'read', 'a2', 'read', 'b2', 'read', 'a3', 'read']);
    expect(order[9]).to.equal('b3');
  });
});
