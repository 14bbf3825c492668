/**
 * Which scanner results can be uploaded (SPEC.md, Imported results) and the
 * limits an upload is held to (DESIGN.md decision 11).
 */
import { InvalidRequestError } from '../errors.js';
import type { ScanType } from '../risks/finding.js';
import { WEB_SCAN_TYPES } from '../scans/scan.js';

export const IMPORTABLE_SCAN_TYPES = ['NMAP', 'NMAP_UDP', 'OPENVAS', 'OWASP_ZAP', 'OWASP_ZAP_ACTIVE'] as const satisfies readonly ScanType[];
export type ImportableScanType = (typeof IMPORTABLE_SCAN_TYPES)[number];

/** 25 MiB: SPEC.md's 25 MB read generously, and the parsers' own cap. */
export const MAX_IMPORT_FILE_BYTES = 25 * 1024 * 1024;

/** A /16: what one network scan produces. Uploads are recorded in short transactions, so this bounds the response and the Scan row, not the event loop. */
export const MAX_IMPORTED_TARGETS = 65_536;

export function importableScanType(value: string): ImportableScanType {
  const found = IMPORTABLE_SCAN_TYPES.find((type) => type === value);
  if (found === undefined) {
    throw new InvalidRequestError(`scan_type '${value.slice(0, 40)}' cannot be uploaded; uploadable types are ${IMPORTABLE_SCAN_TYPES.join(', ')}`);
  }
  return found;
}

/** Port and vulnerability scanner files name their hosts; a web scanner report needs the `target` field. */
export function targetsComeFromFile(type: ImportableScanType): boolean {
  return !WEB_SCAN_TYPES.has(type);
}

/** How the uploaded file is kept as the import Scan's result file. */
export function storedResultFile(type: ImportableScanType): { fileName: string; contentType: string } {
  return targetsComeFromFile(type)
    ? { fileName: 'imported-result.xml', contentType: 'application/xml' }
    : { fileName: 'imported-result.json', contentType: 'application/json' };
}

export function describeBytes(bytes: number): string {
  return `${bytes / 1024 / 1024} MiB`;
}
