/** The parser for each scan type's output (the formats of src/domain/scanners' outputs). */
import type { ResultParser, ScanType } from '../domain/risks/finding.js';
import { createNessusParser } from './nessus.js';
import { createNmapParser } from './nmap.js';
import { createNucleiParser } from './nuclei.js';
import { createOpenVasParser } from './openvas.js';
import { createSslyzeParser } from './sslyze.js';
import { createZapParser } from './zap.js';

export interface ParserOptions {
  /**
   * The largest file the JSON formats (ZAP, nuclei, sslyze) accept; 25 MiB
   * when not given, the limit of an uploaded result. The caller passes the
   * limit it already enforces on the bytes (VIGIL_RESULT_FILE_MAX_MB for a
   * scanner's own output), so the parser never refuses a file its caller
   * let through. The XML formats stream with bounded memory at any size.
   */
  maxBytes?: number;
}

export function parserFor(type: ScanType, options: ParserOptions = {}): ResultParser {
  const json = options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes };
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
      return createZapParser(type, json);
    case 'NUCLEI':
      return createNucleiParser(json);
    case 'SSLYZE':
      return createSslyzeParser(json);
  }
}
