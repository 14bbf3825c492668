/** The scanner definition of each scan type (see definition.ts). */
import type { ScanType } from '../risks/finding.js';
import type { ScannerDefinition } from './definition.js';
import { nessus } from './nessus.js';
import { nmap, nmapUdp } from './nmap.js';
import { nuclei } from './nuclei.js';
import { openvas } from './openvas.js';
import { sslyze } from './sslyze.js';
import { zap, zapActive } from './zap.js';

export type { LocalCommand, ScannerContainer, ScannerDefinition, ScannerInput, ScannerInputFile, ScannerOutput } from './definition.js';
export { SCANNER_IMAGES, VIGIL_VERSION } from './images.js';
export { formatVigilProgress } from './vigil-cli.js';

const DEFINITIONS: Readonly<Record<ScanType, ScannerDefinition>> = {
  NESSUS: nessus,
  NMAP: nmap,
  NMAP_UDP: nmapUdp,
  NUCLEI: nuclei,
  OPENVAS: openvas,
  OWASP_ZAP: zap,
  OWASP_ZAP_ACTIVE: zapActive,
  SSLYZE: sslyze,
};

export function scannerFor(type: ScanType): ScannerDefinition {
  return DEFINITIONS[type];
}
