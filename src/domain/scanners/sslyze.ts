/**
 * sslyze for SSLYZE: TLS configuration of up to 10 host:port endpoints, as
 * JSON. sslyze prints no percentage while it runs, so progress moves only
 * when the Scan finishes.
 */
import type { ScannerDefinition, ScannerInput } from './definition.js';
import { outputPath } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, tlsEndpointOf } from './targets.js';

export const SSLYZE_OUTPUT = 'sslyze.json';

function sslyzeArgs(input: ScannerInput): string[] {
  checkTargetCount('SSLYZE', input.targets);
  const endpoints = [...new Set(input.targets.map(tlsEndpointOf))];
  return [`--json_out=${outputPath(input.outputDir, SSLYZE_OUTPUT)}`, ...endpoints];
}

export const sslyze: ScannerDefinition = {
  type: 'SSLYZE',
  // The image's entrypoint is sslyze itself.
  container: (input) => ({ image: SCANNER_IMAGES.sslyze, args: sslyzeArgs(input) }),
  // `pip install sslyze` puts the `sslyze` command (the python module's CLI) on PATH.
  local: (input) => ({ program: 'sslyze', args: sslyzeArgs(input) }),
  installHint: 'pip install sslyze==6.1.0',
  outputs: [{ file: SSLYZE_OUTPUT, contentType: 'application/json' }],
  progressFrom: () => undefined,
};
