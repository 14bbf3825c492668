/**
 * The embedded runner decides a scanner's outcome from the definition's
 * completeExitCodes, not from "non-zero is failure": a documented "finished
 * with findings or warnings" code with its outputs written is a success.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkloadStatus } from '../../src/app/ports.js';
import type { ScannerDefinition } from '../../src/domain/scanners/definition.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { loadSettings, scannerEnvironment } from '../../src/config/settings.js';
import { launchOptions } from '../../src/main/composition-root.js';
import { ProcessWorkloadRunner } from '../../src/runtime/embedded/process-runner.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { outputBytes } from '../support/workload-output.js';

/** A scanner that writes its report, then exits with `code`. */
function scannerExiting(code: number, completeExitCodes: number[]): ScannerDefinition {
  return {
    type: 'NMAP',
    container: () => ({ image: 'unused:1.0', args: [] }),
    local: () => ({ program: 'sh', args: ['-c', `echo '<nmaprun/>' > report.xml; echo 'warning: a seed answered 404' >&2; exit ${code}`] }),
    completeExitCodes,
    outputs: [{ file: 'report.xml', contentType: 'application/xml' }],
    progressFrom: () => undefined,
  };
}

async function outcome(definition: ScannerDefinition, dir: string, maxOutputBytes?: number): Promise<WorkloadStatus> {
  const runner = new ProcessWorkloadRunner({ workDir: dir, scannerFor: () => definition, deadlineMs: 60_000, environment: scannerEnvironment(), launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })), ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }) });
  const scan = { id: 'scan-1', type: 'NMAP' } as Scan;
  await runner.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
  return waitFor(() => runner.observe(scan.id), (status) => status.phase !== 'Running', 'the scanner to exit');
}

describe('embedded runner: exit codes', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('a listed non-zero code with the outputs written succeeds, with the outputs', async () => {
    const status = await outcome(scannerExiting(2, [0, 2]), join(dir.path, 'work'));
    expect(status.phase).to.equal('Succeeded');
    expect((await outputBytes(status.outputs![0]!)).toString()).to.equal('<nmaprun/>\n');
  });

  it('an unlisted code fails, naming the code and the scanner\'s last error lines', async () => {
    const status = await outcome(scannerExiting(2, [0]), join(dir.path, 'work'));
    expect(status).to.include({ phase: 'Failed', reason: 'ScannerExited' });
    expect(status.message).to.equal('sh exited with code 2: warning: a seed answered 404');
  });

  it('a scanner whose spawner process dies fails as WorkloadLost, and is killed', async () => {
    const definition: ScannerDefinition = { ...scannerExiting(0, [0]), local: () => ({ program: 'sh', args: ['-c', 'echo $PPID > spawner.pid; echo $$ > scanner.pid; exec sleep 300'] }) };
    const workDir = join(dir.path, 'lost');
    const runner = new ProcessWorkloadRunner({ workDir, scannerFor: () => definition, deadlineMs: 60_000, environment: scannerEnvironment(), launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })) });
    const scan = { id: 'scan-lost', type: 'NMAP' } as Scan;
    await runner.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
    const pidIn = (file: string) => waitFor(async () => { try { return Number(readFileSync(join(workDir, scan.id, file), 'utf8')); } catch { return 0; } }, (pid) => pid > 0, file);
    const [spawnerPid, scannerPid] = [await pidIn('spawner.pid'), await pidIn('scanner.pid')];
    process.kill(spawnerPid, 'SIGKILL');
    const status = await waitFor(() => runner.observe(scan.id), (found) => found.phase !== 'Running', 'the scan to fail');
    expect(status).to.include({ phase: 'Failed', reason: 'WorkloadLost' });
    expect(status.message).to.equal('the scanner process was lost (the scanner spawner process exited); start the scan again');
    await waitFor(async () => { try { process.kill(scannerPid, 0); return true; } catch { return false; } }, (alive) => !alive, 'the scanner to be killed');
    await runner.stopAll();
  });

  it('an output file over the result-file limit fails the Scan as OutputTooLarge without being read; at the limit it is read', async () => {
    // '<nmaprun/>\n' is 11 bytes.
    const over = await outcome(scannerExiting(0, [0]), join(dir.path, 'over'), 10);
    expect(over).to.include({ phase: 'Failed', reason: 'OutputTooLarge' });
    expect(over.message).to.equal('the scanner wrote 11 bytes to report.xml, over the 10 bytes limit (VIGIL_RESULT_FILE_MAX_MB); scan fewer targets at a time or raise the limit');
    const within = await outcome(scannerExiting(0, [0]), join(dir.path, 'within'), 11);
    expect(within.phase).to.equal('Succeeded');
  });
});
