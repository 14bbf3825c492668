/**
 * One `vigil serve` per data directory, with real processes: a second one on
 * the same directory exits at once with a sentence naming the directory and
 * the first one, without touching the database; the first keeps serving;
 * after `kill -9` of the first (no clean shutdown) or a clean stop, a new
 * one starts on the directory.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.js';
import { ROOT, VIGIL_COMMAND, startVigil, type VigilProcess } from '../support/vigil-process.js';

/** `vigil serve` that is expected to end by itself: its exit code and output. */
async function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [node, ...args] = VIGIL_COMMAND;
  const child = spawn(node, [...args, 'serve'], { cwd: ROOT, env: { ...process.env, VIGIL_PORT: '0', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Name, size and modification time of every file in the directory. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const stats = statSync(join(dir, name));
      return `${name} ${stats.size} ${stats.mtimeMs}`;
    });
}

/**
 * The directory's snapshot once the first server has stopped writing to it:
 * right after it answers, its checkpointer may still be moving the
 * migrations' pages from the WAL into the database file (a change that
 * would be blamed on the second server).
 */
async function settled(dir: string): Promise<string[]> {
  let last = snapshot(dir);
  for (let tries = 0; tries < 30; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = snapshot(dir);
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error(`the data directory ${dir} kept changing for 30 s with no request made`);
}

describe('one vigil serve per data directory', function () {
  this.timeout(180_000);
  let dir: ReturnType<typeof tempDir>;
  const running: VigilProcess[] = [];

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    for (const served of running.splice(0)) await served.stop();
    dir.remove();
  });

  const env = () => ({ VIGIL_DATA_DIR: dir.path, VIGIL_BOOTSTRAP_API_KEY: '' });
  const healthy = async (served: VigilProcess) => (await fetch(`${served.baseUrl}/healthz`)).status;

  it('refuses a second server on the same directory at once, naming the directory and the first, before touching the database', async () => {
    const first = await startVigil({ env: env() });
    running.push(first);
    const before = await settled(dir.path);
    const second = await serveUntilExit(env());
    expect(second.code).to.equal(1);
    const owner = JSON.parse(readFileSync(join(dir.path, 'serve.lock.owner'), 'utf8')) as { pid: number; host: string; started_at: string };
    expect(owner.pid).to.equal(first.child.pid);
    expect(second.stderr).to.equal(
      `vigil: the data directory ${dir.path} is in use by another vigil serve (pid ${owner.pid} on ${owner.host}, started ${owner.started_at}); stop that one first, or give this one its own VIGIL_DATA_DIR\n`,
    );
    expect(second.stdout, 'no start-up lines: it never got as far as the database').to.equal('');
    expect(snapshot(dir.path)).to.deep.equal(before);
    expect(await healthy(first)).to.equal(200);
  });

  it('starts on the directory after the first was killed with SIGKILL, and after one stopped cleanly', async () => {
    const first = await startVigil({ env: env() });
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const afterCrash = await startVigil({ env: env() });
    running.push(afterCrash);
    expect(await healthy(afterCrash)).to.equal(200);
    expect(JSON.parse(readFileSync(join(dir.path, 'serve.lock.owner'), 'utf8')).pid, 'the owner file names the new server').to.equal(afterCrash.child.pid);
    expect(await running.pop()!.stop()).to.equal(0);
    const afterStop = await startVigil({ env: env() });
    running.push(afterStop);
    expect(await healthy(afterStop)).to.equal(200);
  });

  it('lets servers on different directories run side by side', async () => {
    const other = tempDir();
    try {
      running.push(await startVigil({ env: env() }));
      const beside = await startVigil({ env: { ...env(), VIGIL_DATA_DIR: other.path } });
      running.push(beside);
      expect(await healthy(beside)).to.equal(200);
    } finally {
      for (const served of running.splice(0)) await served.stop();
      other.remove();
    }
  });
});
