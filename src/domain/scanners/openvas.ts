/** OPENVAS: Vigil's CLI drives an OpenVAS (GVM) scanner and writes its XML report. */
import { vigilScannerDefinition } from './vigil-cli.js';

const OPENVAS_OUTPUT = 'openvas.xml';

export const openvas = vigilScannerDefinition('OPENVAS', 'openvas', { file: OPENVAS_OUTPUT, contentType: 'application/xml' });
