/**
 * nuclei for NUCLEI: every default template against up to 10 hosts or URLs,
 * findings as JSON Lines. Targets go in a list file rather than -u, because
 * nuclei splits -u values on commas, which URLs may contain.
 * Progress comes from its statistics, printed as JSON every 5 seconds (-sj);
 * the text form is understood too.
 *
 * Checked against nuclei's sources (cmd/nuclei/main.go, internal/runner,
 * pkg/protocols/common/protocolstate/state.go and its fastdialer v0.5.11):
 * - Templates never come from the network at scan time. The image nuclei
 *   ships has none and installs them from GitHub while it checks for
 *   updates; without egress the run ends "no templates provided for scan"
 *   (exit 1). Kubernetes runs a derived image with nuclei-templates baked in
 *   at a pinned version (images/nuclei/Dockerfile); the embedded runtime
 *   reads them from VIGIL_NUCLEI_TEMPLATES. `-duc` turns the update check
 *   off and `-t` names the directory.
 * - Exit codes: 0 after a run, with or without findings; 1 for fatal errors.
 * - Host names stay in the targets (virtual hosting, SNI) but resolve to the
 *   addresses Vigil checked: nuclei's dialer (fastdialer) answers from a hosts
 *   file before any DNS lookup, and reads that file from $HOSTS_PATH.
 */
import type { LocalCommand, ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath, percentage } from './definition.js';
import { NUCLEI_IMAGE_TEMPLATES, NUCLEI_TEMPLATES_VERSION, SCANNER_IMAGES } from './images.js';
import { checkTargetCount, hostOf, hostsFileLines, webUrlOf } from './targets.js';

const NUCLEI_OUTPUT = 'nuclei.jsonl';
const NUCLEI_TARGET_LIST = 'nuclei-targets.txt';
/** The hosts file pinning target names to their checked addresses (fastdialer reads $HOSTS_PATH). */
const NUCLEI_HOSTS = 'nuclei-hosts';
/** Written beside the templates by images/nuclei/Dockerfile and the README's install steps: the release tag. */
const NUCLEI_TEMPLATES_VERSION_FILE = '.vigil-templates-version';

/** Lines longer than this are findings or noise, never a statistics line. */
const MAX_STATS_LINE = 4096;
const TEXT_STATS = /\| Requests: \d+\/\d+ \((\d{1,3})%\)/;

function nucleiTarget(target: string): string {
  // Validates the host part; nuclei itself takes hosts and URLs alike.
  hostOf(target);
  return /^https?:\/\//i.test(target) ? webUrlOf(target) : target;
}

function nucleiArgs(input: ScannerInput, templatesDir: string): string[] {
  checkTargetCount('NUCLEI', input.targets);
  return [
    '-t',
    templatesDir,
    // No update check: it is also what downloads templates, and scans must not depend on downloads.
    '-duc',
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
  ];
}

function hostsEnv(input: ScannerInput): Record<string, string> | undefined {
  return input.addresses === undefined ? undefined : { HOSTS_PATH: outputPath(input.outputDir, NUCLEI_HOSTS) };
}

function localTemplatesDir(input: ScannerInput): string {
  if (input.nucleiTemplatesDir === undefined) throw new Error('the embedded runtime must pass nucleiTemplatesDir for NUCLEI scans');
  return input.nucleiTemplatesDir;
}

function localNuclei(input: ScannerInput): LocalCommand {
  checkTargetCount('NUCLEI', input.targets);
  const templatesDir = localTemplatesDir(input);
  const env = hostsEnv(input);
  return {
    program: 'nuclei',
    args: nucleiArgs(input, templatesDir),
    ...(env === undefined ? {} : { env }),
    requires: [
      {
        path: templatesDir,
        missing:
          `nuclei has no templates: ${templatesDir} does not exist. Install a pinned release there ` +
          `(git clone --depth 1 --branch ${NUCLEI_TEMPLATES_VERSION} https://github.com/projectdiscovery/nuclei-templates ${templatesDir} && ` +
          `echo ${NUCLEI_TEMPLATES_VERSION} > ${templatesDir}/${NUCLEI_TEMPLATES_VERSION_FILE}) or set VIGIL_NUCLEI_TEMPLATES to where they are`,
      },
    ],
    contentVersion: { name: 'nuclei-templates', file: outputPath(templatesDir, NUCLEI_TEMPLATES_VERSION_FILE) },
  };
}

function nucleiProgress(line: string): number | undefined {
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
  container(input) {
    const env = hostsEnv(input);
    return { image: SCANNER_IMAGES.nuclei, command: ['nuclei'], args: nucleiArgs(input, NUCLEI_IMAGE_TEMPLATES), ...(env === undefined ? {} : { env }) };
  },
  local: localNuclei,
  installHint: 'go install github.com/projectdiscovery/nuclei/v3/cmd/nuclei@v3.11.1, or a release binary from github.com/projectdiscovery/nuclei/releases',
  inputs(input) {
    checkTargetCount('NUCLEI', input.targets);
    const list = { file: NUCLEI_TARGET_LIST, content: `${input.targets.map(nucleiTarget).join('\n')}\n` };
    if (input.addresses === undefined) return [list];
    return [list, { file: NUCLEI_HOSTS, content: `${hostsFileLines(input.targets, input.addresses).join('\n')}\n` }];
  },
  completeExitCodes: [0],
  imageContent: { image: SCANNER_IMAGES.nuclei, description: `nuclei-templates ${NUCLEI_TEMPLATES_VERSION} (baked into ${SCANNER_IMAGES.nuclei})` },
  outputs: [{ file: NUCLEI_OUTPUT, contentType: 'application/x-ndjson' }],
  progressFrom: nucleiProgress,
};
