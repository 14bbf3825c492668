/**
 * Which exit codes leave complete outputs, per scanner, from each scanner's
 * own documentation or source (README, "Scanner invocations"): a scan that
 * found something must not fail because the scanner says so in its exit code.
 */
import { expect } from 'chai';
import { SCAN_TYPES, type ScanType } from '../../src/domain/risks/finding.js';
import { exitedComplete } from '../../src/domain/scanners/definition.js';
import { scannerFor } from '../../src/domain/scanners/index.js';

const TABLE: Array<{ type: ScanType; code: number | null; complete: boolean; why: string }> = [
  { type: 'NMAP', code: 0, complete: true, why: 'nmap exits 0 after a scan, whatever it found' },
  { type: 'NMAP', code: 1, complete: false, why: 'nmap exits 1 on a fatal error' },
  { type: 'NMAP_UDP', code: 1, complete: false, why: 'nmap refuses UDP without root with exit 1' },
  { type: 'SSLYZE', code: 0, complete: true, why: 'sslyze with --mozilla_config=disable exits 0 with findings' },
  { type: 'SSLYZE', code: 1, complete: false, why: 'with the check disabled, 1 is a Python crash' },
  { type: 'SSLYZE', code: 2, complete: false, why: 'argparse refuses the arguments with 2' },
  { type: 'OWASP_ZAP', code: 0, complete: true, why: 'plan succeeded, or warnings under the exitStatus job' },
  { type: 'OWASP_ZAP', code: 2, complete: true, why: 'plan warnings (a 404 seed): the plan ran to its end and wrote the report' },
  { type: 'OWASP_ZAP_ACTIVE', code: 2, complete: true, why: 'same plan, with the active scan' },
  { type: 'OWASP_ZAP', code: 1, complete: false, why: 'plan errors stop the plan (failOnError)' },
  { type: 'OWASP_ZAP_ACTIVE', code: 1, complete: false, why: 'plan errors stop the plan (failOnError)' },
  { type: 'NUCLEI', code: 0, complete: true, why: 'nuclei exits 0 with or without findings' },
  { type: 'NUCLEI', code: 1, complete: false, why: 'fatal: no templates, bad flags' },
  { type: 'OPENVAS', code: 0, complete: true, why: 'vigil scanner wrote the report' },
  { type: 'OPENVAS', code: 1, complete: false, why: 'vigil scanner failed' },
  { type: 'NESSUS', code: 2, complete: false, why: 'vigil scanner refused its arguments' },
];

describe('scanner exit codes', () => {
  for (const row of TABLE) {
    it(`${row.type} exit ${row.code}: ${row.complete ? 'complete' : 'failed'} (${row.why})`, () => {
      expect(exitedComplete(scannerFor(row.type), row.code)).to.equal(row.complete);
    });
  }

  for (const type of SCAN_TYPES) {
    it(`${type}: 0 is complete and a kill by a signal (no exit code) never is`, () => {
      expect(exitedComplete(scannerFor(type), 0)).to.equal(true);
      expect(exitedComplete(scannerFor(type), null)).to.equal(false);
    });
  }
});
