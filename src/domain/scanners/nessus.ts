/** NESSUS: Vigil's CLI drives a Nessus scanner and exports its .nessus (XML) report. */
import { vigilScannerDefinition } from './vigil-cli.js';

const NESSUS_OUTPUT = 'report.nessus';

export const nessus = vigilScannerDefinition('NESSUS', 'nessus', { file: NESSUS_OUTPUT, contentType: 'application/xml' });
