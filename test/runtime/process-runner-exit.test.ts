/**
 * The embedded runner decides a scanner's outcome from the definition's
 * completeExitCodes, not from "non-zero is failure": a documented "finished
 * with findings or warnings" code with its outputs written is a success.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
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
  const runner = new ProcessWorkloadRunner({
    workDir: dir,
    scannerFor: () => definition,
    deadlineMs: 60_000,
    environment: scannerEnvironment(),
    launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })),
    ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
  });
  const scan = { id: 'scan-1', type: 'NMAP' } as Scan;
  await runner.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
  return waitFor(
    () => runner.observe(scan.id),
    (status) => status.phase !== 'Running',
    'the scanner to exit',
  );
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

  it('a small output (up to 1 MiB) is read when the scanner exits, so it outlives the work directory; a larger one is read from it later, in pieces', async () => {
    const writing = (bytes: number): ScannerDefinition => ({
      ...scannerExiting(0, [0]),
      local: () => ({ program: 'sh', args: ['-c', `head -c ${bytes} /dev/zero | tr '\\0' x > report.xml`] }),
    });
    const runner = (name: string, definition: ScannerDefinition) =>
      new ProcessWorkloadRunner({
        workDir: join(dir.path, name),
        scannerFor: () => definition,
        deadlineMs: 60_000,
        environment: scannerEnvironment(),
        launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })),
      });
    const finished = async (workloads: ProcessWorkloadRunner) => {
      const scan = { id: 'scan-1', type: 'NMAP' } as Scan;
      await workloads.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
      const status = await waitFor(
        () => workloads.observe(scan.id),
        (status) => status.phase !== 'Running',
        'the scanner to exit',
      );
      expect(status.phase).to.equal('Succeeded');
      return { status, release: () => workloads.release(scan.id) };
    };
    const small = await finished(runner('small', writing(1024 * 1024)));
    await small.release();
    expect(small.status.outputs![0]!.content).to.be.instanceOf(Uint8Array);
    expect((await outputBytes(small.status.outputs![0]!)).toString()).to.equal('x'.repeat(1024 * 1024));
    const large = await finished(runner('large', writing(1024 * 1024 + 1)));
    expect(large.status.outputs![0]!.content).to.be.a('function');
    expect((await outputBytes(large.status.outputs![0]!)).byteLength).to.equal(1024 * 1024 + 1);
    await large.release();
  });

  it('release forgets the workload at once and removes its work directory in the background; stopAll waits for the removal', async () => {
    const workDir = join(dir.path, 'released');
    const runner = new ProcessWorkloadRunner({
      workDir,
      scannerFor: () => scannerExiting(0, [0]),
      deadlineMs: 60_000,
      environment: scannerEnvironment(),
      launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })),
    });
    const scan = { id: 'scan-1', type: 'NMAP' } as Scan;
    await runner.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
    await waitFor(
      () => runner.observe(scan.id),
      (status) => status.phase !== 'Running',
      'the scanner to exit',
    );
    expect(existsSync(join(workDir, scan.id, 'report.xml'))).to.equal(true);
    await runner.release(scan.id);
    expect(await runner.observe(scan.id)).to.deep.equal({ phase: 'Missing' });
    await runner.stopAll();
    expect(existsSync(join(workDir, scan.id))).to.equal(false);
  });

  it("an unlisted code fails, naming the code and the scanner's last error lines", async () => {
    const status = await outcome(scannerExiting(2, [0]), join(dir.path, 'work'));
    expect(status).to.include({ phase: 'Failed', reason: 'ScannerExited' });
    expect(status.message).to.equal('sh exited with code 2: warning: a seed answered 404');
  });

  it('a scanner whose spawner process dies fails as WorkloadLost, and is killed', async () => {
    const definition: ScannerDefinition = {
      ...scannerExiting(0, [0]),
      local: () => ({ program: 'sh', args: ['-c', 'echo $PPID > spawner.pid; echo $$ > scanner.pid; exec sleep 300'] }),
    };
    const workDir = join(dir.path, 'lost');
    const runner = new ProcessWorkloadRunner({
      workDir,
      scannerFor: () => definition,
      deadlineMs: 60_000,
      environment: scannerEnvironment(),
      launch: launchOptions(loadSettings({ PATH: process.env.PATH ?? '' })),
    });
    const scan = { id: 'scan-lost', type: 'NMAP' } as Scan;
    await runner.start(scan, [{ targetId: 't', target: '198.51.100.7', addresses: ['198.51.100.7'] }]);
    const pidIn = (file: string) =>
      waitFor(
        async () => {
          try {
            return Number(readFileSync(join(workDir, scan.id, file), 'utf8'));
          } catch {
            return 0;
          }
        },
        (pid) => pid > 0,
        file,
      );
    const [spawnerPid, scannerPid] = [await pidIn('spawner.pid'), await pidIn('scanner.pid')];
    process.kill(spawnerPid, 'SIGKILL');
    const status = await waitFor(
      () => runner.observe(scan.id),
      (found) => found.phase !== 'Running',
      'the scan to fail',
    );
    expect(status).to.include({ phase: 'Failed', reason: 'WorkloadLost' });
    expect(status.message).to.equal('the scanner process was lost (the scanner spawner process exited); start the scan again');
    await waitFor(
      async () => {
        try {
          process.kill(scannerPid, 0);
          return true;
        } catch {
          return false;
        }
      },
      (alive) => !alive,
      'the scanner to be killed',
    );
    await runner.stopAll();
  });

  it('an output file over the result-file limit fails the Scan as OutputTooLarge without being read; at the limit it is read', async () => {
    // '<nmaprun/>\n' is 11 bytes.
    const over = await outcome(scannerExiting(0, [0]), join(dir.path, 'over'), 10);
    expect(over).to.include({ phase: 'Failed', reason: 'OutputTooLarge' });
    expect(over.message).to.equal(
      'the scanner wrote 11 bytes to report.xml, over the 10 bytes limit (VIGIL_RESULT_FILE_MAX_MB); scan fewer targets at a time or raise the limit',
    );
    const within = await outcome(scannerExiting(0, [0]), join(dir.path, 'within'), 11);
    expect(within.phase).to.equal('Succeeded');
  });
});
