import { expect } from 'chai';
import type { ParseResult, ResultParser } from '../../src/domain/risks/finding.js';
import { createNessusParser } from '../../src/parsers/nessus.js';
import { createNmapParser } from '../../src/parsers/nmap.js';
import { createOpenVasParser } from '../../src/parsers/openvas.js';
import { fixtureFiles, parseWhole, readFixture } from './fixture-expectations.js';
import { seededRandom } from './json-parser-checks.js';

const PARSERS: Record<string, () => ResultParser> = {
  nmap: () => createNmapParser('NMAP'),
  openvas: createOpenVasParser,
  nessus: createNessusParser,
};

function parseByteByByte(parser: ResultParser, bytes: Uint8Array): ParseResult {
  for (let offset = 0; offset < bytes.length; offset += 1) parser.write(bytes.subarray(offset, offset + 1));
  return parser.end();
}

function parseInRandomChunks(parser: ResultParser, bytes: Uint8Array, seed: number): ParseResult {
  const random = seededRandom(seed);
  let offset = 0;
  while (offset < bytes.length) {
    const size = 1 + Math.floor(random() * 4096);
    parser.write(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return parser.end();
}

describe('parsers read any split of their input the same', () => {
  for (const [format, createParser] of Object.entries(PARSERS)) {
    for (const name of fixtureFiles(format)) {
      it(`gives the same result for ${format}/${name} written whole, byte by byte and in random chunks`, () => {
        const bytes = readFixture(format, name);
        const whole = parseWhole(createParser(), bytes);
        expect(parseByteByByte(createParser(), bytes)).to.deep.equal(whole);
        expect(parseInRandomChunks(createParser(), bytes, bytes.length)).to.deep.equal(whole);
      });
    }
  }

  it('decodes multi-byte UTF-8 characters split across writes', () => {
    const original = readFixture('nmap', 'defectdojo-nmap-nmap_script_vulners.xml').toString('utf8');
    const product = 'OpenSSH ✓ Ünïcödé 日本語 🔐';
    const bytes = new TextEncoder().encode(original.replace('product="OpenSSH"', `product="${product}"`));
    const whole = parseWhole(createNmapParser('NMAP'), bytes);
    expect(whole.findings[0]?.definition.title).to.equal(`Open port 5022/tcp (ssh ${product} 7.4)`);
    expect(parseByteByByte(createNmapParser('NMAP'), bytes)).to.deep.equal(whole);
    for (const seed of [1, 2, 3]) expect(parseInRandomChunks(createNmapParser('NMAP'), bytes, seed)).to.deep.equal(whole);
  });
});
