/**
 * Child processes and temp directories of a benchmark run, and their cleanup:
 * on normal exit, on an error, and on Ctrl-C / SIGTERM. Only the processes
 * started here are ever signalled, each by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Child {
  name: string;
  process: ChildProcess;
  /** The last few kilobytes of the child's stdout and stderr, for error messages. */
  output(): string;
  /** Resolves when the child has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<Child>();
const directories = new Set<string>();
let handlersInstalled = false;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  // Last resort: synchronous, so it also runs on process.exit().
  process.on('exit', () => {
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping child processes and removing temp files\n`);
      void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}

/** A fresh directory under the OS temp dir, removed by cleanup() and at exit. */
export function tempDirectory(prefix: string): string {
  installHandlers();
  const path = mkdtempSync(join(tmpdir(), prefix));
  directories.add(path);
  return path;
}

/** Starts a child process whose output is kept (not printed) and which is stopped by cleanup(). */
export function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Child {
  installHandlers();
  const proc = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => resolve(code));
    proc.once('error', (error) => {
      keep(Buffer.from(`spawn failed: ${error.message}\n`));
      resolve(null);
    });
  });
  const child: Child = {
    name,
    process: proc,
    output: () => output,
    exited,
    stop: async (graceMs = 3_000) => {
      if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      children.delete(child);
    },
  };
  children.add(child);
  void exited.then(() => proc.stdout!.removeAllListeners('data'));
  return child;
}

/** Stops every child started here and removes every temp directory made here. */
export async function cleanup(): Promise<void> {
  await Promise.all([...children].map((child) => child.stop()));
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  directories.clear();
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 200, the child exits, or `timeoutMs` passes. */
export async function waitForHttp(child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void child.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${child.name} exited (code ${exitCode}) before answering ${url}:\n${child.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer ${url} within ${timeoutMs / 1000} s:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The newest modification time (ms) of any file under `directory`, or 0 when it does not exist. */
export function newestMtime(directory: string): number {
  if (!existsSync(directory)) return 0;
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Runs a benchmark's main, then its cleanup, also when main fails (exit code
 * 1, the error on stderr). With a budget, a run still going after it is
 * cleaned up and ended, so a hung benchmark never blocks `make bench`.
 */
export function runBenchmark(main: () => Promise<void>, cleanup: () => Promise<void>, budgetSeconds?: number): void {
  const watchdog =
    budgetSeconds === undefined
      ? undefined
      : setTimeout(() => {
          process.stderr.write(`bench: still running after ${budgetSeconds} s, giving up\n`);
          void cleanup().finally(() => process.exit(1));
        }, budgetSeconds * 1000);
  watchdog?.unref();
  main().then(
    async () => {
      await cleanup();
      clearTimeout(watchdog);
    },
    async (error: unknown) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      await cleanup();
      clearTimeout(watchdog);
      process.exitCode = 1;
    },
  );
}
