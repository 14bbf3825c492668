/**
 * The embedded runner's scanner spawner (src/runtime/embedded/spawner.ts):
 * scanners start from a small process of its own, and what they print and
 * how they end reach the runner as they would from a direct child; none
 * outlives the service.
 */
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ScannerSpawner, SPAWNER_LOST } from '../../src/runtime/embedded/spawner.js';
import { waitFor } from '../support/wait.js';

interface Run {
  lines: Array<[string, 'stdout' | 'stderr']>;
  errors: Array<{ message: string; code?: string }>;
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

function run(
  spawner: ScannerSpawner,
  program: string,
  args: string[],
  env?: Record<string, string | undefined>,
  onStart?: (kill: (signal: NodeJS.Signals) => void) => void,
): Promise<Run> {
  return new Promise((resolve) => {
    const lines: Run['lines'] = [];
    const errors: Run['errors'] = [];
    const child = spawner.spawn(program, args, {
      cwd: '/tmp',
      ...(env === undefined ? {} : { env }),
      onLine: (line, stream) => {
        lines.push([line, stream]);
        if (line === 'ready') onStart?.((signal) => child.kill(signal));
      },
      onError: (error) => errors.push(error),
      onClose: (code, signal) => resolve({ lines, errors, exit: { code, signal } }),
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('embedded runner: scanner spawner', () => {
  let spawner: ScannerSpawner;
  beforeEach(() => (spawner = new ScannerSpawner()));
  afterEach(() => spawner.close());

  it('relays every line of stdout and stderr (\\n, \\r\\n, a lone \\r, an unterminated last line) and the exit code', async () => {
    const result = await run(spawner, '/bin/sh', ['-c', `printf 'one\\ntwo\\r\\nthree\\rfour'; printf 'oops\\n' >&2; exit 3`]);
    expect(result.lines.filter(([, stream]) => stream === 'stdout').map(([line]) => line)).to.deep.equal(['one', 'two', 'three', 'four']);
    expect(result.lines.filter(([, stream]) => stream === 'stderr').map(([line]) => line)).to.deep.equal(['oops']);
    expect(result.exit).to.deep.equal({ code: 3, signal: null });
    expect(result.errors).to.deep.equal([]);
  });

  it("runs in the given directory with exactly the given environment, without the spawner's IPC channel", async () => {
    const result = await run(spawner, '/bin/sh', ['-c', 'pwd; env | sort'], { PATH: process.env.PATH, ONLY_THIS: 'yes' });
    const out = result.lines.map(([line]) => line);
    expect(out[0]).to.equal('/tmp');
    expect(out).to.include('ONLY_THIS=yes');
    expect(out.some((line) => line.startsWith('NODE_CHANNEL'))).to.equal(false);
  });

  it('an inherited environment carries no NODE_CHANNEL_FD either', async () => {
    const result = await run(spawner, '/bin/sh', ['-c', 'env']);
    expect(result.lines.some(([line]) => line.startsWith('NODE_CHANNEL'))).to.equal(false);
    expect(result.lines.some(([line]) => line.startsWith('PATH='))).to.equal(true);
  });

  it('started settles once the process exists (a RUNNING scan has its scanner), and for a program that cannot start', async () => {
    let closed: (value: unknown) => void = () => undefined;
    const exited = new Promise((resolve) => (closed = resolve));
    const child = spawner.spawn('/bin/sh', ['-c', 'exec sleep 300'], {
      cwd: '/tmp',
      onLine: () => undefined,
      onError: () => undefined,
      onClose: (code, signal) => closed(signal),
    });
    await child.started;
    expect(execFileSync('ps', ['-o', 'args=', '--ppid', String(spawner.pid)]).toString()).to.include('sleep 300');
    child.kill('SIGKILL');
    expect(await exited).to.equal('SIGKILL');
    const missing = spawner.spawn('/nonexistent/scanner', [], { cwd: '/tmp', onLine: () => undefined, onError: () => undefined, onClose: () => undefined });
    await missing.started;
  });

  it('start() forks the spawner ahead of the first scanner and resolves once it is ready; the scanners then run from that same process', async () => {
    expect(spawner.pid).to.equal(undefined);
    await spawner.start();
    const pid = spawner.pid!;
    expect(alive(pid)).to.equal(true);
    await spawner.start();
    expect(spawner.pid).to.equal(pid);
    const result = await run(spawner, '/bin/sh', ['-c', 'echo $PPID']);
    expect(result.lines).to.deep.equal([[String(pid), 'stdout']]);
  });

  it('start() after the spawner died forks a new one', async () => {
    await spawner.start();
    const first = spawner.pid!;
    process.kill(first, 'SIGKILL');
    await waitFor(
      async () => spawner.pid,
      (pid) => pid === undefined,
      'the dead spawner to be noticed',
      30_000,
    );
    await spawner.start();
    expect(spawner.pid).to.not.equal(first);
    expect((await run(spawner, '/bin/sh', ['-c', 'echo again'])).lines).to.deep.equal([['again', 'stdout']]);
  });

  it('a program that does not exist is an error, then a close', async () => {
    const result = await run(spawner, '/nonexistent/scanner', []);
    expect(result.errors).to.have.length(1);
    expect(result.errors[0]!.code).to.equal('ENOENT');
    expect(result.exit.code).to.not.equal(0);
  });

  it('kill() sends the signal to the scanner', async () => {
    const result = await run(spawner, '/bin/sh', ['-c', 'echo ready; exec sleep 300'], undefined, (kill) => kill('SIGTERM'));
    expect(result.exit).to.deep.equal({ code: null, signal: 'SIGTERM' });
  });

  it('many scanners at once each get their own lines and exit', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => run(spawner, '/bin/sh', ['-c', `echo scanner-${i}; exit ${i % 4}`])));
    results.forEach((result, i) => {
      expect(result.lines).to.deep.equal([[`scanner-${i}`, 'stdout']]);
      expect(result.exit.code).to.equal(i % 4);
    });
  });

  it('a spawner that dies ends its scanners as killed (and kills them), and the next scanner gets a new spawner', async () => {
    let scannerPid = 0;
    const first = await run(spawner, '/bin/sh', ['-c', 'echo $$; echo ready; exec sleep 300'], undefined, () => process.kill(spawner.pid!, 'SIGKILL'));
    scannerPid = Number(first.lines[0]![0]);
    expect(first.exit).to.deep.equal({ code: null, signal: 'SIGKILL' });
    expect(first.errors).to.deep.equal([{ message: 'the scanner spawner process exited', code: SPAWNER_LOST }]);
    await waitFor(
      async () => alive(scannerPid),
      (isAlive) => !isAlive,
      'the orphaned scanner to be killed',
      30_000,
    );
    const next = await run(spawner, '/bin/sh', ['-c', 'echo again']);
    expect(next.lines).to.deep.equal([['again', 'stdout']]);
    expect(next.exit.code).to.equal(0);
  });

  it('a scanner does not outlive the service, however the service ends (SIGKILL)', async () => {
    const parent = spawn(process.execPath, ['--import', 'tsx', 'test/support/spawner-parent.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const firstLine = await new Promise<string>((resolve) => createInterface({ input: parent.stdout! }).once('line', resolve));
    const scannerPid = Number(firstLine);
    expect(alive(scannerPid)).to.equal(true);
    parent.kill('SIGKILL');
    await waitFor(
      async () => alive(scannerPid),
      (isAlive) => !isAlive,
      'the scanner to be killed with its service',
      30_000,
    );
  });
});
