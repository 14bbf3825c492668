/**
 * Writes test/fixtures/nmap/expected/<name>.findings.json: what the nmap
 * parser hands out (its sink's batches and end()'s result) for each input of
 * test/parsers/nmap-golden-inputs.ts. test/parsers/nmap-golden.test.ts checks
 * the parser still gives exactly these, so a change made for speed cannot
 * change a finding. Run it only when a finding is meant to change, and say
 * why in the commit:
 *
 *   npx tsx scripts/write-nmap-goldens.ts
 *
 * The goldens first committed were written by the parser at commit 59536f2,
 * before issue 17's parser speed work.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { goldenText, NMAP_GOLDENS, nmapGoldenInputs } from '../test/parsers/nmap-golden-inputs.js';

mkdirSync(NMAP_GOLDENS, { recursive: true });
for (const { name, bytes } of nmapGoldenInputs()) {
  const file = join(NMAP_GOLDENS, `${name}.findings.json`);
  writeFileSync(file, goldenText(bytes));
  console.log(file);
}
