/** The parser for each scan type's output (the formats of src/domain/scanners' outputs). */
import type { ResultParser, ScanType } from '../domain/risks/finding.js';
import { createNessusParser } from './nessus.js';
import { createNmapParser } from './nmap.js';
import { createNucleiParser } from './nuclei.js';
import { createOpenVasParser } from './openvas.js';
import { createSslyzeParser } from './sslyze.js';
import { createZapParser } from './zap.js';

export function parserFor(type: ScanType): ResultParser {
  switch (type) {
    case 'NMAP':
    case 'NMAP_UDP':
      return createNmapParser(type);
    case 'OPENVAS':
      return createOpenVasParser();
    case 'NESSUS':
      return createNessusParser();
    case 'OWASP_ZAP':
    case 'OWASP_ZAP_ACTIVE':
      return createZapParser(type);
    case 'NUCLEI':
      return createNucleiParser();
    case 'SSLYZE':
      return createSslyzeParser();
  }
}
