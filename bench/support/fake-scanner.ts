/**
 * A fast fake nmap for the Scans benchmark, and the bare baseline that starts
 * the same program directly.
 *
 * The fake is a real child process: it prints one nmap-style progress line,
 * writes a minimal nmap.xml to the -oX path it is given, and exits 0. Vigil
 * runs it through the real nmap ScannerDefinition with only `local()`
 * replaced, so progress parsing and output collection are the real ones.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { scannerFor } from '../../src/domain/scanners/index.js';
import { outputPath, type LocalCommand, type ScannerDefinition } from '../../src/domain/scanners/definition.js';
import { NMAP_OUTPUT } from '../../src/domain/scanners/nmap.js';
import type { ScanType } from '../../src/domain/risks/finding.js';

export type FakeKind = 'node' | 'sh';

export const PROGRESS_LINE = 'Connect Scan Timing: About 50.00% done; ETC: 12:00 (0:00:01 remaining)';
const XML = '<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="fake" version="7.94"></nmaprun>\n';

const NODE_SCRIPT = [
  "const { writeFileSync } = require('node:fs');",
  `process.stdout.write(${JSON.stringify(`Starting Nmap 7.94 ( https://nmap.org )\n${PROGRESS_LINE}\n`)});`,
  `writeFileSync(process.argv[1], ${JSON.stringify(XML)});`,
].join('\n');

const SH_SCRIPT = `printf '%s\\n' 'Starting Nmap 7.94 ( https://nmap.org )' '${PROGRESS_LINE}'; printf '%s\\n' ${XML.trim()
  .split('\n')
  .map((line) => `'${line}'`)
  .join(' ')} > "$1"`;

/** The fake scanner's command line for one output directory (the targets are passed along, as nmap gets them, and ignored). */
export function fakeNmapCommand(kind: FakeKind, outputDir: string, targets: readonly string[]): LocalCommand {
  const xmlPath = outputPath(outputDir, NMAP_OUTPUT);
  return kind === 'node'
    ? { program: process.execPath, args: ['-e', NODE_SCRIPT, xmlPath, ...targets] }
    : { program: '/bin/sh', args: ['-c', SH_SCRIPT, 'fake-nmap', xmlPath, ...targets] };
}

export function describeFake(kind: FakeKind): string {
  return kind === 'node' ? `${process.execPath} -e <script> (a Node process)` : '/bin/sh -c <printf script>';
}

/** The real scannerFor, except that NMAP's local() runs the fake. */
export function scannerForWithFakeNmap(kind: FakeKind): (type: ScanType) => ScannerDefinition {
  const real = scannerFor('NMAP');
  const fake: ScannerDefinition = { ...real, local: (input) => fakeNmapCommand(kind, input.outputDir, input.targets) };
  return (type) => (type === 'NMAP' ? fake : scannerFor(type));
}

export interface BareRun {
  processes: number;
  ms: number;
  /** Spawn to close, per process. */
  lifetimesMs: number[];
}

/**
 * Starts `count` fake scanners with at most `limit` alive at a time, each in a
 * directory of its own and with piped output that is read to the end (as the
 * runner does), and resolves when the last has closed. Any non-zero exit fails.
 */
export async function runBare(kind: FakeKind, baseDir: string, count: number, limit: number): Promise<BareRun> {
  const dirs = Array.from({ length: count }, (_, i) => {
    const dir = join(baseDir, `bare-${i}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  });
  const lifetimesMs: number[] = [];
  let next = 0;
  const startOne = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const command = fakeNmapCommand(kind, dirs[index]!, [`127.0.0.${index + 1}`]);
      const child = spawn(command.program, command.args, { cwd: dirs[index]!, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr!.resume();
      child.once('error', reject);
      child.once('close', (code, signal) => {
        if (code !== 0) reject(new Error(`bare fake scanner ${index} exited with code ${code} signal ${signal}`));
        else if (!stdout.includes(PROGRESS_LINE)) reject(new Error(`bare fake scanner ${index} did not print its progress line`));
        else {
          lifetimesMs.push(performance.now() - started);
          resolve();
        }
      });
    });
  const lane = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) await startOne(index);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  return { processes: count, ms: performance.now() - started, lifetimesMs };
}
