/**
 * `vigil serve` as a real child process, from any working directory, with
 * only the environment a test gives it on top of the test's own: what a
 * person starting it from a shell gets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The sources run through tsx, so a test needs no build; `--import` takes tsx by URL, found from any working directory. */
export const VIGIL_COMMAND = [process.execPath, '--import', import.meta.resolve('tsx'), `${ROOT}src/cli/main.ts`] as const;

export interface VigilProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `vigil serve` and resolves once it logs that it listens. VIGIL_PORT defaults to 0 (a free port). */
export async function startVigil(options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<VigilProcess> {
  const [node, ...args] = VIGIL_COMMAND;
  const child = spawn(node, [...args, 'serve'], { cwd: options.cwd ?? ROOT, env: { ...process.env, VIGIL_PORT: '0', ...options.env } });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /"port":(\d+).*"msg":"vigil listening"/.exec(stdout);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
}
