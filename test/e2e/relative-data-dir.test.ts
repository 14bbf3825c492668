/**
 * What a person meets first: `vigil serve` started from some directory with
 * the default (relative) data directory, or a relative one of their own, and
 * a real NMAP scan. The scanner runs inside its work directory, so a relative
 * path handed to it would point elsewhere; every test that passed an absolute
 * directory missed exactly that.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { tempDir } from '../support/temp-dir.js';
import { startVigil, type VigilProcess } from '../support/vigil-process.js';
import { waitFor } from '../support/wait.js';

const KEY = 'relative-data-dir-test-key-0123456789';

/** The test process's environment without any VIGIL_ variable: the defaults a user has. */
function withoutVigilVariables(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).map(([name, value]) => [name, name.startsWith('VIGIL_') ? undefined : value]));
}

describe('a relative data directory, from another working directory, with a real scan', function () {
  this.timeout(120_000);
  let cwd: ReturnType<typeof tempDir>;
  let vigil: VigilProcess | undefined;
  let listener: TcpListener;

  beforeEach(async () => {
    cwd = tempDir();
    listener = await tcpListener();
  });
  afterEach(async () => {
    await vigil?.stop();
    vigil = undefined;
    await listener.close();
    cwd.remove();
  });

  async function scanOnce(): Promise<{ state: string; conditions: unknown[]; results: Array<{ result_id: string }> }> {
    const headers = { 'X-SERVICE-API-KEY': KEY, 'Content-Type': 'application/json' };
    const created = await fetch(`${vigil!.baseUrl}/v1/scans`, { method: 'POST', headers, body: JSON.stringify({ type: 'NMAP', targets: ['127.0.0.1'] }) });
    expect(created.status).to.equal(200);
    const { id } = ((await created.json()) as { data: { id: string } }).data;
    const read = async () =>
      (
        (await (await fetch(`${vigil!.baseUrl}/v1/scans/${id}`, { headers })).json()) as {
          data: { state: string; conditions: unknown[]; results: Array<{ result_id: string }> };
        }
      ).data;
    return waitFor(read, (scan) => ['SUCCEEDED', 'FAILED'].includes(scan.state), 'the scan to finish');
  }

  const cases: ReadonlyArray<[string, Record<string, string>, string]> = [
    ['the default ./data', {}, 'data'],
    ['VIGIL_DATA_DIR=state/vigil', { VIGIL_DATA_DIR: 'state/vigil' }, 'state/vigil'],
  ];
  for (const [what, env, dataDir] of cases) {
    it(`${what}: the database and the result file live under the start directory and the scan succeeds`, async () => {
      vigil = await startVigil({
        cwd: cwd.path,
        env: { ...withoutVigilVariables(), VIGIL_ALLOW_TARGETS: '127.0.0.0/8', VIGIL_BOOTSTRAP_API_KEY: KEY, ...env },
      });
      const done = await scanOnce();
      expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
      expect(existsSync(join(cwd.path, dataDir, 'vigil.db'))).to.equal(true);
      const file = await fetch(`${vigil.baseUrl}/v1/results/${done.results[0]!.result_id}`, { headers: { 'X-SERVICE-API-KEY': KEY } });
      expect(await file.text()).to.include(`portid="${listener.port}"><state state="open"`);
      expect(vigil.stdout()).to.include(`"data_dir":"${join(cwd.path, dataDir)}"`);
    });
  }
});
