/** Writes docs/cli.md's command reference from the commander program (scripts/cli-doc.ts). */
import { writeFileSync } from 'node:fs';
import { CLI_DOC, expectedCliDoc } from './cli-doc.js';

writeFileSync(CLI_DOC, expectedCliDoc());
console.log('wrote docs/cli.md');
