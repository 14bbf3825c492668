/** Writes docs/configuration.md's table of environment variables from the settings module (scripts/configuration-doc.ts). */
import { writeFileSync } from 'node:fs';
import { CONFIGURATION_DOC, expectedConfigurationDoc } from './configuration-doc.js';

writeFileSync(CONFIGURATION_DOC, expectedConfigurationDoc());
console.log('wrote docs/configuration.md');
