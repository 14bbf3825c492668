/**
 * sslyze for SSLYZE: TLS configuration of up to 10 host:port endpoints, as
 * JSON. sslyze prints no percentage while it runs, so progress moves only
 * when the Scan finishes.
 *
 * Checked against sslyze's sources (`sslyze/__main__.py`,
 * `sslyze/cli/command_line_parser.py`, `sslyze/cli/server_string_parser.py`)
 * for the 6.1.0 image:
 * - Without scan-command flags sslyze turns on `--mozilla_config=intermediate`
 *   and exits 1 when a server is not compliant (or one endpoint could not be
 *   scanned), after writing the JSON. `--mozilla_config=disable` still queues
 *   the scan commands that check needs and skips it, so a weak server ends
 *   with exit 0 and its findings. Exit 1 is also how Python reports an
 *   uncaught exception, so 1 cannot mean "complete": only 0 does.
 * - A server string `host:port{ip}` connects to `ip` and keeps `host` for SNI
 *   and certificate checks: sslyze gets the address Vigil checked and never
 *   resolves the name itself.
 */
import type { ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, isIpv4Literal, tlsEndpointOf, vettedAddressesOf } from './targets.js';

const SSLYZE_OUTPUT = 'sslyze.json';

/** `host:port{ip}` per checked address; an IP literal is its own address. */
function serverStrings(endpoint: string, addresses: ScannerInput['addresses']): string[] {
  const separator = endpoint.lastIndexOf(':');
  const host = endpoint.slice(0, separator);
  if (addresses === undefined || isIpv4Literal(host)) return [endpoint];
  return vettedAddressesOf(host, addresses).map((address) => `${endpoint}{${address}}`);
}

function sslyzeArgs(input: ScannerInput): string[] {
  checkTargetCount('SSLYZE', input.targets);
  const endpoints = [...new Set(input.targets.map(tlsEndpointOf))];
  return [
    '--mozilla_config=disable',
    `--json_out=${outputPath(input.outputDir, SSLYZE_OUTPUT)}`,
    ...new Set(endpoints.flatMap((endpoint) => serverStrings(endpoint, input.addresses))),
  ];
}

export const sslyze: ScannerDefinition = {
  type: 'SSLYZE',
  // The image's entrypoint is sslyze itself.
  container: (input) => ({ image: SCANNER_IMAGES.sslyze, args: sslyzeArgs(input) }),
  // `pip install sslyze` puts the `sslyze` command (the python module's CLI) on PATH.
  local: (input) => ({ program: 'sslyze', args: sslyzeArgs(input) }),
  installHint: 'pip install sslyze==6.1.0',
  completeExitCodes: [0],
  outputs: [{ file: SSLYZE_OUTPUT, contentType: 'application/json' }],
  progressFrom: () => undefined,
};
