import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { goldenText, NMAP_GOLDENS, nmapGoldenInputs, parseForGolden } from './nmap-golden-inputs.js';

/**
 * The nmap parser's output, finding for finding and byte for byte as JSON,
 * against goldens written by the parser before issue 17's speed work
 * (commit 59536f2; scripts/write-nmap-goldens.ts says how). Written whole
 * and in small pieces, so that a change to how text is gathered across
 * writes shows too.
 */
describe('nmap parser output is unchanged (goldens)', () => {
  for (const { name, bytes } of nmapGoldenInputs()) {
    it(`gives exactly the pinned findings and hosts for ${name}`, () => {
      const golden = readFileSync(join(NMAP_GOLDENS, `${name}.findings.json`), 'utf8');
      const parsed = JSON.parse(golden) as ReturnType<typeof parseForGolden>;
      const whole = parseForGolden(bytes);
      expect(whole).to.deep.equal(parsed);
      expect(goldenText(bytes)).to.equal(golden);
      for (const chunkSize of [7, 4093]) expect(goldenText(bytes, chunkSize), `written ${chunkSize} bytes at a time`).to.equal(golden);
    });
  }
});
