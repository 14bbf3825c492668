/** The parser for each scan type's output (the formats of src/domain/scanners' outputs). */
import type { FindingSink, ResultParser, ScanType } from '../domain/risks/finding.js';
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
  /**
   * Where the XML parsers (nmap, OpenVAS, Nessus) hand their findings over in
   * batches as they parse, holding none to the end; the other formats return
   * theirs in the result as without it.
   */
  findings?: FindingSink;
}

export function parserFor(type: ScanType, options: ParserOptions = {}): ResultParser {
  const json = options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes };
  switch (type) {
    case 'NMAP':
    case 'NMAP_UDP':
      return createNmapParser(type, options.findings);
    case 'OPENVAS':
      return createOpenVasParser(options.findings);
    case 'NESSUS':
      return createNessusParser(options.findings);
    case 'OWASP_ZAP':
    case 'OWASP_ZAP_ACTIVE':
      return createZapParser(type, json);
    case 'NUCLEI':
      return createNucleiParser(json);
    case 'SSLYZE':
      return createSslyzeParser(json);
  }
}
