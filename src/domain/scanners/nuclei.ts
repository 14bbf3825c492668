/**
 * nuclei for NUCLEI: every default template against up to 10 hosts or URLs,
 * findings as JSON Lines. Targets go in a list file rather than -u, because
 * nuclei splits -u values on commas, which URLs may contain.
 * Progress comes from its statistics, printed as JSON every 5 seconds (-sj);
 * the text form is understood too.
 */
import type { ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath, percentage } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, hostOf, webUrlOf } from './targets.js';

export const NUCLEI_OUTPUT = 'nuclei.jsonl';
export const NUCLEI_TARGET_LIST = 'nuclei-targets.txt';

/** Lines longer than this are findings or noise, never a statistics line. */
const MAX_STATS_LINE = 4096;
const TEXT_STATS = /\| Requests: \d+\/\d+ \((\d{1,3})%\)/;

function nucleiTarget(target: string): string {
  // Validates the host part; nuclei itself takes hosts and URLs alike.
  hostOf(target);
  return /^https?:\/\//i.test(target) ? webUrlOf(target) : target;
}

function nucleiArgs(input: ScannerInput): string[] {
  checkTargetCount('NUCLEI', input.targets);
  return [
    '-l',
    outputPath(input.outputDir, NUCLEI_TARGET_LIST),
    '-jsonl',
    '-o',
    outputPath(input.outputDir, NUCLEI_OUTPUT),
    // The parser keeps neither requests nor responses: leave them out of the file.
    '-omit-raw',
    '-stats',
    '-sj',
    '-si',
    '5',
    '-no-color',
    // No -disable-update-check: nuclei installs its templates only while it
    // checks for updates, and the image ships without them.
  ];
}

export function nucleiProgress(line: string): number | undefined {
  if (line.length > MAX_STATS_LINE) return undefined;
  const text = TEXT_STATS.exec(line);
  if (text) return percentage(text[1]);
  const trimmed = line.trim();
  if (!trimmed.startsWith('{') || !trimmed.includes('"percent"')) return undefined;
  try {
    const stats = JSON.parse(trimmed) as Record<string, unknown>;
    if (!('requests' in stats) || !('total' in stats)) return undefined;
    const reported = stats.percent;
    return typeof reported === 'string' || typeof reported === 'number' ? percentage(reported) : undefined;
  } catch {
    return undefined;
  }
}

export const nuclei: ScannerDefinition = {
  type: 'NUCLEI',
  container: (input) => ({ image: SCANNER_IMAGES.nuclei, command: ['nuclei'], args: nucleiArgs(input) }),
  local: (input) => ({ program: 'nuclei', args: nucleiArgs(input) }),
  installHint: 'go install github.com/projectdiscovery/nuclei/v3/cmd/nuclei@v3.11.1, or a release binary from github.com/projectdiscovery/nuclei/releases',
  inputs(input) {
    checkTargetCount('NUCLEI', input.targets);
    return [{ file: NUCLEI_TARGET_LIST, content: `${input.targets.map(nucleiTarget).join('\n')}\n` }];
  },
  outputs: [{ file: NUCLEI_OUTPUT, contentType: 'application/x-ndjson' }],
  progressFrom: nucleiProgress,
};
