/**
 * nmap for NMAP (TCP) and NMAP_UDP.
 *
 * NMAP is a TCP connect scan (-sT), which needs no privileges, of the top 1000
 * ports with service detection. NMAP_UDP scans the top 100 UDP ports (-sU);
 * UDP scanning needs raw sockets: in Kubernetes the container gets CAP_NET_RAW
 * and nothing else, and in the embedded runtime it runs only when Vigil
 * runs as root (otherwise nmap quits: "You requested a scan type which
 * requires root privileges").
 * Both skip host discovery (-Pn): targets are hosts the customer named, and
 * many public hosts drop ping probes.
 * nmap is given the addresses Vigil resolved and checked, never the names,
 * so a name that rebinds after the check cannot lead it elsewhere.
 * Exit codes (nmap.cc, checked at 7.95): 0 after a scan, whatever it found;
 * 1 for fatal errors.
 */
import type { LocalCommand, ScannerContainer, ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath, percentage } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, vettedHosts } from './targets.js';

export const NMAP_OUTPUT = 'nmap.xml';

/** "Connect Scan Timing: About 12.34% done; ETC: ..." and the same for UDP and service scans. */
const TIMING_LINE = /\bTiming: About (\d{1,3}(?:\.\d+)?)% done\b/;

const SCAN_FLAGS = {
  NMAP: ['-sT', '-sV', '--top-ports', '1000'],
  // Light version probes tell open UDP ports from open|filtered ones without
  // the minutes per port that full intensity costs.
  NMAP_UDP: ['-sU', '-sV', '--version-light', '--top-ports', '100'],
} as const;

type NmapType = keyof typeof SCAN_FLAGS;

function nmapArgs(type: NmapType, input: ScannerInput): string[] {
  checkTargetCount(type, input.targets);
  return [
    ...SCAN_FLAGS[type],
    '-Pn',
    '-T4',
    '--stats-every',
    '2s',
    '-oX',
    outputPath(input.outputDir, NMAP_OUTPUT),
    ...vettedHosts(input.targets, input.addresses),
  ];
}

function nmapProgress(line: string): number | undefined {
  const match = TIMING_LINE.exec(line);
  return match ? percentage(match[1]) : undefined;
}

function nmapDefinition(type: NmapType): ScannerDefinition {
  return {
    type,
    container(input): ScannerContainer {
      const container: ScannerContainer = { image: SCANNER_IMAGES.nmap, command: ['nmap'], args: nmapArgs(type, input) };
      return type === 'NMAP_UDP' ? { ...container, capabilities: ['NET_RAW'] } : container;
    },
    local(input): LocalCommand {
      return { program: 'nmap', args: nmapArgs(type, input) };
    },
    installHint: 'apt-get install nmap',
    completeExitCodes: [0],
    outputs: [{ file: NMAP_OUTPUT, contentType: 'application/xml' }],
    progressFrom: nmapProgress,
  };
}

export const nmap = nmapDefinition('NMAP');
export const nmapUdp = nmapDefinition('NMAP_UDP');
