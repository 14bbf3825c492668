/**
 * Starts scanner processes for the embedded runner from a small forked
 * process (spawner-process.ts) instead of from the service itself: a fork
 * costs in proportion to the memory of the process that forks, so from the
 * service it took ~3.5-4.5 ms of its event loop per scanner, from the
 * spawner ~1.2 ms on another core (bench/scans.ts). The spawner is forked
 * by start() (the service's start) or else on the first scanner start,
 * shared by every scanner of the runner, and closed with it; a spawner that dies is forked again for the next scanner,
 * and the scanners it was running end as killed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

export type SpawnerRequest =
  | { op: 'spawn'; id: number; program: string; args: string[]; cwd: string; env?: Record<string, string | undefined> }
  | { op: 'kill'; id: number; signal: NodeJS.Signals };

export type SpawnerEvent =
  | { op: 'ready' }
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'lines'; id: number; stream: 'stdout' | 'stderr'; lines: string[] }
  | { op: 'error'; id: number; message: string; code?: string }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

export interface SpawnOptions {
  cwd: string;
  /** The whole environment of the process; absent, it inherits the service's. */
  env?: Record<string, string | undefined>;
  onLine: (line: string, stream: 'stdout' | 'stderr') => void;
  /** The process could not start (or the spawner was lost); close follows. */
  onError: (error: { message: string; code?: string }) => void;
  /** The process ended and its output was read to the end. Called once. */
  onClose: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/** A scanner process started through the spawner. */
export interface SpawnedProcess {
  /** Settles once the process exists (or could not start): then its pid is known and kill() reaches it. */
  readonly started: Promise<void>;
  /** True until its close was reported. */
  readonly running: boolean;
  kill(signal: NodeJS.Signals): void;
}

interface Tracked extends SpawnOptions {
  running: boolean;
  pid?: number;
  markStarted: () => void;
}

/** The error code onError gets when the spawner itself ended under a running scanner. */
export const SPAWNER_LOST = 'ESPAWNERLOST';

/** Flags of the service's own command line that the spawner needs too: how to load TypeScript under tsx, and nothing else (no --inspect, no --cpu-prof). */
const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

function loaderArgs(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    const flag = arg.split('=')[0]!;
    if (!LOADER_FLAGS.has(flag)) continue;
    kept.push(arg);
    if (!arg.includes('=') && i + 1 < execArgv.length) kept.push(execArgv[++i]!);
  }
  return kept;
}

/** spawner-process.js beside this module (spawner-process.ts when the sources run through tsx). */
const SPAWNER_MODULE = fileURLToPath(new URL(`./spawner-process${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

export class ScannerSpawner {
  private child: ChildProcess | undefined;
  private readonly processes = new Map<number, Tracked>();
  /** Spawners that said they are ready. */
  private readonly ready = new WeakSet<ChildProcess>();
  private nextId = 1;

  /** Starts a program; what it prints and how it ends come back through the options' callbacks. */
  spawn(program: string, args: readonly string[], options: SpawnOptions): SpawnedProcess {
    const child = this.spawner();
    const id = this.nextId++;
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const tracked: Tracked = { ...options, running: true, markStarted };
    this.processes.set(id, tracked);
    child.channel?.ref();
    child.send({
      op: 'spawn',
      id,
      program,
      args: [...args],
      cwd: options.cwd,
      ...(options.env === undefined ? {} : { env: options.env }),
    } satisfies SpawnerRequest);
    return {
      started,
      get running() {
        return tracked.running;
      },
      kill: (signal) => {
        if (tracked.running && this.child === child && child.connected) child.send({ op: 'kill', id, signal } satisfies SpawnerRequest);
      },
    };
  }

  /**
   * Forks the spawner now, and resolves once it is ready to start scanners
   * (or has exited: the first spawn() then forks another). The embedded
   * runtime calls it at service start, so the first scans do not wait for
   * a fork of Node to load (~50 ms from dist/, ~0.5 s under tsx), holding
   * controller workers meanwhile (bench/scans.ts).
   */
  start(): Promise<void> {
    const child = this.spawner();
    if (this.ready.has(child)) return Promise.resolve();
    // Waiting for it keeps the event loop alive (an idle spawner does not).
    child.channel?.ref();
    return new Promise((resolve) => {
      const settle = () => {
        child.off('message', onMessage);
        child.off('exit', settle);
        if (this.processes.size === 0) child.channel?.unref();
        resolve();
      };
      const onMessage = (event: SpawnerEvent) => event.op === 'ready' && settle();
      child.on('message', onMessage);
      child.once('exit', settle);
    });
  }

  /** The spawner's process id while it runs (for tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Closes the channel: the spawner kills whatever still runs and exits. */
  close(): void {
    const child = this.child;
    this.child = undefined;
    if (child?.connected) child.disconnect();
  }

  private spawner(): ChildProcess {
    if (this.child !== undefined && this.child.connected) return this.child;
    const child = fork(SPAWNER_MODULE, [], {
      execArgv: loaderArgs(process.execArgv),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.child = child;
    child.on('message', (event: SpawnerEvent) => this.onEvent(child, event));
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
      this.lost();
    });
    // Idle, the spawner does not keep the service's event loop alive; a running scanner does (spawn() refs the channel).
    child.unref();
    child.channel?.unref();
    return child;
  }

  private onEvent(child: ChildProcess, event: SpawnerEvent): void {
    if (event.op === 'ready') {
      this.ready.add(child);
      return;
    }
    const tracked = this.processes.get(event.id);
    if (tracked === undefined) return;
    switch (event.op) {
      case 'spawned':
        tracked.pid = event.pid;
        tracked.markStarted();
        return;
      case 'lines':
        for (const line of event.lines) tracked.onLine(line, event.stream);
        return;
      case 'error':
        tracked.markStarted();
        tracked.onError({ message: event.message, ...(event.code === undefined ? {} : { code: event.code }) });
        return;
      case 'close':
        this.closed(event.id, tracked, event.code, event.signal);
        return;
    }
  }

  private closed(id: number, tracked: Tracked, code: number | null, signal: NodeJS.Signals | null): void {
    this.processes.delete(id);
    tracked.running = false;
    tracked.markStarted();
    if (this.processes.size === 0) this.child?.channel?.unref();
    tracked.onClose(code, signal);
  }

  /**
   * The spawner exited: on its way out it killed its scanners, but a spawner
   * killed outright (SIGKILL, the OOM killer) could not, so they are killed
   * here by pid; each ends as killed.
   */
  private lost(): void {
    for (const [id, tracked] of [...this.processes]) {
      if (tracked.pid !== undefined) killQuietly(tracked.pid);
      tracked.onError({ message: 'the scanner spawner process exited', code: SPAWNER_LOST });
      this.closed(id, tracked, null, 'SIGKILL');
    }
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
