/**
 * OPENVAS and NESSUS are not plain programs: Vigil's own CLI (`vigil scanner
 * openvas|nessus`) drives the scanner's API, waits for the report and writes
 * it under outputDir. In Kubernetes it runs from Vigil's image; in the
 * embedded runtime it runs as a child process of the same Node.js binary.
 * The CLI reports progress with formatVigilProgress, which progressFrom reads.
 */
import type { ScanType } from '../risks/finding.js';
import type { LocalCommand, ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath, percentage } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, vettedHosts } from './targets.js';

const PROGRESS_LINE = /^vigil-scanner progress (\d{1,3})%$/;

/** The progress line `vigil scanner` prints on stdout. */
export function formatVigilProgress(percent: number): string {
  return `vigil-scanner progress ${Math.round(percent)}%`;
}

function vigilScannerProgress(line: string): number | undefined {
  const match = PROGRESS_LINE.exec(line.trim());
  return match ? percentage(match[1]) : undefined;
}

export function vigilScannerDefinition(type: ScanType, subcommand: string, output: { file: string; contentType: string }): ScannerDefinition {
  const cliArgs = (input: ScannerInput): string[] => {
    checkTargetCount(type, input.targets);
    // The scanner server gets the checked addresses, as nmap does: it would resolve a name again.
    return ['scanner', subcommand, '--output', outputPath(input.outputDir, output.file), '--', ...vettedHosts(input.targets, input.addresses)];
  };
  return {
    type,
    container: (input) => ({ image: SCANNER_IMAGES.vigil, command: ['vigil'], args: cliArgs(input) }),
    local(input): LocalCommand {
      // Without a CLI path, `vigil` must be on PATH (installed with npm -g).
      return input.cliPath === undefined ? { program: 'vigil', args: cliArgs(input) } : { program: process.execPath, args: [input.cliPath, ...cliArgs(input)] };
    },
    // src/cli/main.ts: 0 once the report is written, 1 on failure, 2 on bad arguments.
    completeExitCodes: [0],
    outputs: [output],
    progressFrom: vigilScannerProgress,
  };
}
