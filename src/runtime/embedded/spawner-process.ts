/**
 * The embedded runtime's scanner spawner: a small Node process, forked once
 * by the service (spawner.ts), that starts the scanner processes on its
 * behalf and relays their output lines and exits over the IPC channel.
 *
 * Why: Node starts a child with fork + exec, and the fork copies the page
 * tables of the process that forks, so its cost grows with that process's
 * memory: ~3.5-4.5 ms of the service's event loop per scanner (RSS ~300-400
 * MB) against ~1.2 ms here (RSS ~50 MB), and here it is spent on another
 * core while the service answers requests (bench/scans.ts).
 *
 * A scanner never outlives the service: when the channel closes (the
 * service exited, however it exited), every scanner still running is
 * killed and this process exits.
 *
 * Messages in (SpawnerRequest) and out (SpawnerEvent) are in spawner.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { SpawnerEvent, SpawnerRequest } from './spawner.js';

/** Lines longer than this are cut (the rest of the line is dropped): a scanner's output is bounded on the way to the service. */
const MAX_LINE_CHARS = 64 * 1024;

const children = new Map<number, ChildProcess>();

function send(event: SpawnerEvent): void {
  // The service may close the channel at any moment (it is exiting): what could not be sent is not news.
  if (process.connected) process.send!(event, undefined, {}, () => undefined);
}

process.on('error', () => undefined);

/** Splits a stream into lines (as readline does: \n, \r\n or a lone \r) and sends them in one message per chunk read. */
function relayLines(id: number, stream: 'stdout' | 'stderr', readable: NodeJS.ReadableStream): void {
  let partial = '';
  readable.setEncoding('utf8');
  readable.on('data', (chunk: string) => {
    const parts = (partial + chunk).split(/\r\n|\n|\r/);
    partial = parts.pop()!;
    if (partial.length > MAX_LINE_CHARS) partial = partial.slice(0, MAX_LINE_CHARS);
    if (parts.length > 0) send({ op: 'lines', id, stream, lines: parts.map(clean) });
  });
  readable.on('end', () => {
    if (partial !== '') send({ op: 'lines', id, stream, lines: [clean(partial)] });
    partial = '';
  });
}

function clean(line: string): string {
  return line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
}

function start(request: Extract<SpawnerRequest, { op: 'spawn' }>): void {
  const { id, program, args, cwd, env } = request;
  let child: ChildProcess;
  try {
    child = spawn(program, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(env === undefined ? {} : { env }) });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    send({ op: 'error', id, message: (error as Error).message, ...(code === undefined ? {} : { code }) });
    send({ op: 'close', id, code: null, signal: null });
    return;
  }
  children.set(id, child);
  if (child.pid !== undefined) send({ op: 'spawned', id, pid: child.pid });
  relayLines(id, 'stdout', child.stdout!);
  relayLines(id, 'stderr', child.stderr!);
  let closed = false;
  const close = (code: number | null, signal: NodeJS.Signals | null) => {
    if (closed) return;
    closed = true;
    children.delete(id);
    send({ op: 'close', id, code, signal });
  };
  child.once('error', (error: NodeJS.ErrnoException) => {
    send({ op: 'error', id, message: error.message, ...(error.code === undefined ? {} : { code: error.code }) });
    // A program that never started (ENOENT, EACCES) may report no close of its own.
    if (child.pid === undefined) close(null, null);
  });
  child.once('close', close);
}

process.on('message', (request: SpawnerRequest) => {
  switch (request.op) {
    case 'spawn':
      start(request);
      return;
    case 'kill': {
      const child = children.get(request.id);
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill(request.signal);
      return;
    }
  }
});

// The service is gone (or closed the channel on shutdown): no scanner outlives it.
process.on('disconnect', () => {
  for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  process.exit(0);
});

// Said once its handlers are in place: the service may wait for it at start (ScannerSpawner.start).
send({ op: 'ready' });
