/**
 * A refusal sent while the client is still sending its body (a refused
 * upload) must reach the client: closing a socket with unread bytes makes
 * the kernel send a reset, and the client sees EPIPE or a closed connection
 * instead of the 400 (issue 26). As nginx's lingering close does, the answer
 * is written whole with `Connection: close`, the rest of the body is read and
 * discarded (never stored, one chunk at a time), and the connection closes
 * when the body ends, the client goes away, or a bound is passed.
 */
import type { Request, Response } from 'express';
import { Buffer } from 'node:buffer';
import { systemTimers, type TimerHandle, type Timers } from '../app/controller/timer.js';
import { MAX_IMPORT_FILE_BYTES } from '../domain/imports/importable.js';

export interface LingerBounds {
  /** Bytes read and discarded after the refusal; more and the connection is cut. */
  maxBytes: number;
  /** The whole linger (nginx's lingering_time). */
  totalMs: number;
  /** Between two reads (nginx's lingering_timeout). */
  idleMs: number;
}

/** The multipart limit (DESIGN.md decision 11), nginx's 30 s and 5 s. */
const LINGER_BOUNDS: LingerBounds = { maxBytes: MAX_IMPORT_FILE_BYTES, totalMs: 30_000, idleMs: 5_000 };

export type LingerOutcome = 'ended' | 'client closed' | 'too large' | 'timed out' | 'idle';

/** True while the client may still send body bytes nobody will read. */
export function hasUnreadBody(req: Request): boolean {
  return (
    !req.complete && !req.readableEnded && !req.destroyed && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
  );
}

/**
 * Writes a JSON refusal whole, then reads and drops the rest of the body
 * within the bounds before ending the response (Node closes the connection
 * then, with nothing unread); past a bound the socket is destroyed.
 */
export function sendRefusalAndLinger(
  req: Request,
  res: Response,
  status: number,
  body: unknown,
  bounds: LingerBounds = LINGER_BOUNDS,
  timers: Timers = systemTimers(),
): Promise<LingerOutcome> {
  const text = JSON.stringify(body);
  res.status(status).setHeader('Connection', 'close');
  res.type('json').setHeader('Content-Length', Buffer.byteLength(text));
  res.write(text);
  return discardUnreadBody(req, bounds, timers).then((outcome) => {
    if (outcome === 'ended' || outcome === 'client closed') res.end();
    else req.socket.destroy();
    return outcome;
  });
}

/** Reads the request to its end, dropping each chunk; resolves with why it stopped. */
export function discardUnreadBody(req: Request, bounds: LingerBounds, timers: Timers): Promise<LingerOutcome> {
  return new Promise((resolve) => {
    let discarded = 0;
    let idle: TimerHandle | undefined;
    const total = timers.setTimeout(() => stop('timed out'), bounds.totalMs);
    const armIdle = (): void => {
      if (idle !== undefined) timers.clearTimeout(idle);
      idle = timers.setTimeout(() => stop('idle'), bounds.idleMs);
    };
    const onData = (chunk: Buffer): void => {
      discarded += chunk.length;
      if (discarded > bounds.maxBytes) stop('too large');
      else armIdle();
    };
    const onEnd = (): void => stop('ended');
    const onClose = (): void => stop(req.complete ? 'ended' : 'client closed');
    function stop(outcome: LingerOutcome): void {
      timers.clearTimeout(total);
      if (idle !== undefined) timers.clearTimeout(idle);
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(outcome);
    }
    // Whatever read the body before (busboy, an upload's iterator) has let go of it; nothing else may see these bytes.
    req.unpipe();
    req.removeAllListeners('data');
    req.on('data', onData).once('end', onEnd).once('close', onClose);
    req.on('error', () => undefined);
    armIdle();
    req.resume();
  });
}
