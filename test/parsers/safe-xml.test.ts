import { expect } from 'chai';
import { MalformedResultError } from '../../src/domain/errors.js';
import type { ResultParser } from '../../src/domain/risks/finding.js';
import { createNessusParser } from '../../src/parsers/nessus.js';
import { createNmapParser } from '../../src/parsers/nmap.js';
import { createOpenVasParser } from '../../src/parsers/openvas.js';
import { createSafeXmlReader, endsInsideCharacter, pathEndsWith, relativePath, type XmlElement } from '../../src/parsers/xml/safe-xml.js';
import { seededRandom } from './json-parser-checks.js';
import { readFixture } from './fixture-expectations.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Each parser with the root element it accepts, so that hostile bodies get past the root check. */
const PARSERS: Array<[string, string, () => ResultParser]> = [
  ['nmap', 'nmaprun', () => createNmapParser('NMAP')],
  ['OpenVAS', 'report', createOpenVasParser],
  ['Nessus', 'NessusClientData_v2', createNessusParser],
];

/** Writes `bytes` in chunks of `chunkSize`, returning what end() returns. */
function parseInChunks(parser: ResultParser, bytes: Uint8Array, chunkSize = 64 * 1024): ReturnType<ResultParser['end']> {
  for (let offset = 0; offset < bytes.length; offset += chunkSize) parser.write(bytes.subarray(offset, offset + chunkSize));
  return parser.end();
}

/** Runs `parse` and returns the MalformedResultError it throws. */
function refusal(parse: () => unknown): MalformedResultError {
  try {
    parse();
  } catch (error) {
    expect(error).to.be.instanceOf(MalformedResultError);
    return error as MalformedResultError;
  }
  expect.fail('the file was accepted');
}

function billionLaughs(root: string): string {
  const entities = Array.from({ length: 9 }, (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`);
  return `<?xml version="1.0"?>\n<!DOCTYPE ${root} [\n <!ENTITY lol "lol">\n${entities.join('\n')}\n]>\n<${root}>&lol9;</${root}>\n`;
}

function externalEntity(root: string): string {
  return `<?xml version="1.0"?>\n<!DOCTYPE ${root} [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<${root}>&xxe;</${root}>\n`;
}

describe('safe XML reading of scanner files', () => {
  for (const [format, root, createParser] of PARSERS) {
    describe(`the ${format} parser`, () => {
      it('refuses a DOCTYPE with entity declarations (billion laughs) before expanding anything', () => {
        const error = refusal(() => parseInChunks(createParser(), encode(billionLaughs(root))));
        expect(error.message).to.match(/declares a DOCTYPE with an internal subset .*refusing it to avoid entity expansion/);
      });

      it('refuses an external entity pointing at file:///etc/passwd', () => {
        const error = refusal(() => parseInChunks(createParser(), encode(externalEntity(root))));
        expect(error.message).to.match(/DOCTYPE/);
        expect(error.message).not.to.match(/root:/);
      });

      it('refuses 100 000 nested elements at the nesting cap, within the first chunk', () => {
        const parser = createParser();
        const deep = encode(`<${root}>${'<a>'.repeat(100_000)}`);
        const error = refusal(() => parser.write(deep.subarray(0, 64 * 1024)));
        expect(error.message).to.match(/nests elements more than 64 levels deep \(line 1, column \d+\)/);
      });

      it('refuses bytes that are not UTF-8', () => {
        const latin1 = Uint8Array.from([...encode(`<${root}><x>Caf`), 0xe9, ...encode(`</x></${root}>`)]);
        expect(refusal(() => parseInChunks(createParser(), latin1)).message).to.match(/^The file is not valid UTF-8 text/);
      });

      it('refuses a file that ends in the middle of a UTF-8 character', () => {
        const withEuro = encode(`<${root}>\u20ac`);
        const cut = withEuro.subarray(0, withEuro.length - 1);
        expect(refusal(() => parseInChunks(createParser(), cut)).message).to.match(/not valid UTF-8/);
      });

      it('refuses a JSON file, saying it is not XML', () => {
        const error = refusal(() => parseInChunks(createParser(), encode('{"site": [{"alerts": []}]}\n')));
        expect(error.message).to.match(/does not start with '<', so it is not XML; expected .* with the root element </);
      });

      it('refuses an empty file and a file of blank lines', () => {
        expect(refusal(() => parseInChunks(createParser(), new Uint8Array(0))).message).to.match(/^The file is empty; expected /);
        expect(refusal(() => parseInChunks(createParser(), encode('\n  \n'))).message).to.match(/contains no XML element/);
      });

      it('refuses mismatched tags, naming the line', () => {
        const document = encode(`<?xml version="1.0"?>\n<${root}>\n<a></b>\n</${root}>\n`);
        expect(refusal(() => parseInChunks(createParser(), document)).message).to.match(/^The file is not well-formed XML: .* \(line 3, column \d+\)/);
      });
    });
  }

  it('refuses a truncated real report, saying it looks truncated', () => {
    const whole = readFixture('nmap', 'defectdojo-nmap-issue4406.xml');
    const error = refusal(() => parseInChunks(createNmapParser('NMAP'), whole.subarray(0, whole.length / 2)));
    expect(error.message).to.match(/^The file ends inside <\w+> at line \d+, before the root element is closed; it looks truncated\.$/);
  });

  it('refuses a well-formed report of another scanner, naming the root element it expected', () => {
    const nessusFile = readFixture('nessus', 'defectdojo-nessus-nessus_was_no_vuln.xml');
    expect(refusal(() => parseInChunks(createNmapParser('NMAP'), nessusFile)).message).to.equal(
      "The file's root element is <NessusClientData_v2>, but an nmap XML report (nmap -oX) has the root element <nmaprun>.",
    );
    const nmapFile = readFixture('nmap', 'defectdojo-nmap-nmap_0port.xml');
    expect(refusal(() => parseInChunks(createOpenVasParser(), nmapFile)).message).to.match(/root element is <nmaprun>, but an OpenVAS/);
    const openVasFile = readFixture('openvas', 'defectdojo-openvas-no_vuln.xml');
    expect(refusal(() => parseInChunks(createNessusParser(), openVasFile)).message).to.match(/<report>, but a Nessus v2 report/);
  });

  it('refuses an entity reference that no DOCTYPE could have declared', () => {
    expect(refusal(() => parseInChunks(createNmapParser('NMAP'), encode('<nmaprun>&xxe;</nmaprun>'))).message).to.match(/undefined entity/);
  });

  it('refuses a file over the 25 MiB default while it is being written', () => {
    const parser = createNmapParser('NMAP');
    parser.write(encode('<nmaprun>'));
    const mebibyteOfSpaces = new Uint8Array(1024 * 1024).fill(0x20);
    // The write that crosses the cap is refused, not the end of the file.
    let written = 0;
    const error = refusal(() => {
      for (; written < 26; written += 1) parser.write(mebibyteOfSpaces);
    });
    expect(written, 'mebibytes accepted after the 9-byte start tag').to.equal(24);
    expect(error.message).to.equal('The file is larger than 25 MiB, the limit for scanner results.');
  });

  it('keeps refusing after a failure instead of parsing on from a broken state', () => {
    const parser = createNmapParser('NMAP');
    const first = refusal(() => parser.write(encode('{}')));
    expect(() => parser.write(encode('<nmaprun/>'))).to.throw(first.message);
    expect(() => parser.end()).to.throw(first.message);
  });

  it('accepts a comment before the XML declaration, a bare or PUBLIC nmap DOCTYPE, and a UTF-8 byte order mark', () => {
    const documents = [
      '<!--\nSPDX-License-Identifier: Apache-2.0\n-->\n\n<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE nmaprun>\n<nmaprun/>\n',
      '<?xml version="1.0"?>\n<!DOCTYPE nmaprun PUBLIC "-//IDN nmap.org//DTD Nmap XML 1.04//EN" "https://svn.nmap.org/nmap/docs/nmap.dtd">\n<nmaprun/>',
      '\ufeff<?xml version="1.0"?><nmaprun/>',
    ];
    for (const document of documents) {
      expect(parseInChunks(createNmapParser('NMAP'), encode(document), 7)).to.deep.equal({ findings: [], hosts: [] });
    }
  });

  it('decodes any split of the bytes as one streaming TextDecoder does: characters cut between writes, a byte-order mark only at the start, bad bytes at the write that holds them', () => {
    const text = '\ufeff<r a="é\ufeff">\ufeff€ 日本 🔐 \u00a0x</r>';
    const bytes = encode(text);
    const textOf = (chunks: Uint8Array[]): string | Error => {
      let gathered = '';
      const reader = createSafeXmlReader(
        { expected: 'a test document', rootElements: ['r'] },
        { close: (element, elementText) => (gathered += `${element.attributes.a}|${elementText}`) },
      );
      try {
        for (const chunk of chunks) reader.write(chunk);
        reader.end();
        return gathered;
      } catch (error) {
        return error as Error;
      }
    };
    const random = seededRandom(5);
    for (let round = 0; round < 300; round++) {
      const chunks: Uint8Array[] = [];
      for (let offset = 0; offset < bytes.length;) {
        const size = Math.floor(random() * 6); // 0 included: an empty write changes nothing
        chunks.push(bytes.subarray(offset, offset + size));
        offset += size;
      }
      expect(textOf(chunks)).to.equal('é\ufeff|\ufeff€ 日本 🔐 \u00a0x');
    }
    const invalid = Uint8Array.from([...encode('<r>ab'), 0xe2, 0x28, 0xa1, ...encode('</r>')]);
    for (const cut of [5, 6, 7]) {
      const error = textOf([invalid.subarray(0, cut), invalid.subarray(cut)]);
      expect(error, `cut at ${cut}`).to.be.instanceOf(MalformedResultError);
      expect((error as Error).message).to.match(new RegExp(`not valid UTF-8 text \\(near byte ${cut < 7 ? invalid.length : cut}\\)`));
    }
    expect(
      [[], [0x41], [0xc3], [0xc3, 0xa9], [0xe2, 0x82], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x94], [0xf0, 0x9f, 0x94, 0x90], [0x80]].map((tail) =>
        endsInsideCharacter(Uint8Array.from(tail)),
      ),
    ).to.deep.equal([false, false, true, false, true, false, true, true, true]);
  });

  it('still refuses a second XML declaration or one after an element', () => {
    const late = encode('<nmaprun/>\n<?xml version="1.0"?>');
    expect(refusal(() => parseInChunks(createNmapParser('NMAP'), late)).message).to.match(/not well-formed XML/);
  });

  it('refuses more bytes than the reader was configured for', () => {
    const reader = createSafeXmlReader({ expected: 'a test file', rootElements: ['r'], maxBytes: 1000 }, {});
    reader.write(new Uint8Array(1000).fill(0x20));
    expect(() => reader.write(encode('<r/>'))).to.throw(MalformedResultError, 'The file is larger than 1000 bytes');
  });

  it('hands handlers each element with its path, attributes and own text', () => {
    const seen: Array<[string, string]> = [];
    const reader = createSafeXmlReader(
      { expected: 'a test file', rootElements: ['r'] },
      {
        open: (element: XmlElement) => seen.push(['open', `${element.path.join('/')} ${JSON.stringify(element.attributes)}`]),
        close: (element: XmlElement, text: string) => seen.push(['close', `${element.path.join('/')} ${JSON.stringify(text)}`]),
      },
    );
    reader.write(encode('<r><host>10.0.0.1<asset id="a"/><![CDATA[ <x> ]]>&amp;</host></r>'));
    reader.end();
    expect(seen).to.deep.equal([
      ['open', 'r {}'],
      ['open', 'r/host {}'],
      ['open', 'r/host/asset {"id":"a"}'],
      ['close', 'r/host/asset ""'],
      ['close', 'r/host "10.0.0.1 <x> &"'],
      ['close', 'r ""'],
    ]);
    expect(pathEndsWith(['report', 'results', 'result'], 'results', 'result')).to.equal(true);
    expect(pathEndsWith(['result'], 'results', 'result')).to.equal(false);
    expect(relativePath(['report', 'results', 'result', 'nvt', 'name'], 2)).to.equal('nvt/name');
  });
});
