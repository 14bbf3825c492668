import { expect } from 'chai';
import { MalformedResultError } from '../../src/domain/errors.js';
import { cappedPlainText, htmlToPlainText } from '../../src/parsers/json/html-text.js';
import { JsonStream, type JsonStreamOptions } from '../../src/parsers/json/json-stream.js';
import { capText } from '../../src/parsers/json/merge-findings.js';
import { seededRandom, utf8 } from './json-parser-checks.js';

const FORMAT = 'test report';

interface Reported {
  depth: number;
  path: Array<string | number | undefined>;
  value: unknown;
}

/** Streams `bytes` in pieces of `pieceSize` (0: whole) and returns the document and every value reported, as copies. */
function stream(bytes: Uint8Array, depth: number, pieceSize = 0, options: JsonStreamOptions = {}): { document: unknown; reported: Reported[] } {
  const reported: Reported[] = [];
  const reader = new JsonStream(
    FORMAT,
    options,
    (completed) => {
      const path = Array.from({ length: completed.depth }, (_, index) => completed.keyAt(index + 1));
      reported.push({ depth: completed.depth, path, value: structuredClone(completed.value) });
    },
    depth,
  );
  if (pieceSize === 0) reader.write(bytes);
  else for (let offset = 0; offset < bytes.length; offset += pieceSize) reader.write(bytes.subarray(offset, offset + pieceSize));
  return { document: reader.end(), reported };
}

/** What the reader must report: every value up to `maxDepth`, innermost first, in file order. */
function expectedReports(value: unknown, maxDepth: number, depth = 0, path: Array<string | number | undefined> = []): Reported[] {
  const reports: Reported[] = [];
  if (depth < maxDepth && value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((item, index) => [index, item] as const) : Object.entries(value);
    for (const [key, member] of entries) reports.push(...expectedReports(member, maxDepth, depth + 1, [...path, key]));
  }
  reports.push({ depth, path, value });
  return reports;
}

const VALID_DOCUMENTS = [
  '{"site":[{"@name":"https://a.example","alerts":[{"pluginid":"1","desc":"<p>x</p>","instances":[{"uri":"/"}]},{"pluginid":"2"}]}]}',
  ' \n\t{ "a" : [ 1 , -2.5e+3 , true , false , null , "s" , { } , [ ] , { "b" : [ [ [ "deep" ] ] ] } ] , "c" : "\\"quoted\\" \\\\ \\/ \\n \\u00e9 \\ud83d\\ude00" } \r\n',
  '[{"é":"ü € 😀","k":"\\\\"},"\\\\\\"",[[["x"]]],12345678901234567890,0,-0,1E-7]',
  '"just a string"',
  '42',
  'true',
  '[]',
  '{}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}',
  '\ufeff{"bom":true}',
];

const INVALID_DOCUMENTS = [
  '{"a":1,}',
  '{"a" 1}',
  '{"a":1}}',
  '{"a":1} x',
  '[1 2]',
  '[1,]',
  '{a:1}',
  '{"a":[{"b":tru}]}',
  '{"a":[{"b":1,}]}',
  '{"a":[{"b":"\\x"}]}',
  '{"a":[{"b":[}]}]}',
  '{"a":[nul]}',
  '[01]',
  '{"a":"unterminated',
  '{"a":[{"b":1}',
  '{',
  ']',
  '"\u0001"',
];

describe('JsonStream (reading a JSON document as its bytes arrive)', () => {
  for (const text of VALID_DOCUMENTS) {
    for (const depth of [0, 1, 2, 4]) {
      it(`reads ${JSON.stringify(text.slice(0, 40))} reporting values to depth ${depth} as JSON.parse reads it, in any pieces`, () => {
        const parsed = JSON.parse(text.replace(/^\ufeff/, '')) as unknown;
        const bytes = utf8(text);
        const whole = stream(bytes, depth);
        expect(whole.document).to.deep.equal(parsed);
        expect(whole.reported).to.deep.equal(expectedReports(parsed, depth));
        for (const pieceSize of [1, 2, 3, 7]) expect(stream(bytes, depth, pieceSize)).to.deep.equal(whole);
      });
    }
  }

  it('reports both members of a repeated key and keeps the last, as JSON.parse does', () => {
    const { document, reported } = stream(utf8('{"a":1,"a":2}'), 1);
    expect(document).to.deep.equal({ a: 2 });
    expect(reported.map((report) => report.value)).to.deep.equal([1, 2, { a: 2 }]);
  });

  it('keeps "__proto__" as an own key, as JSON.parse does, without touching the prototype', () => {
    const { document } = stream(utf8('{"__proto__":{"polluted":true}}'), 1);
    expect(Object.getPrototypeOf(document)).to.equal(Object.prototype);
    expect(Object.keys(document as object)).to.deep.equal(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  for (const text of INVALID_DOCUMENTS) {
    it(`refuses ${JSON.stringify(text)} at the end, as JSON.parse refuses it, in any pieces`, () => {
      expect(() => JSON.parse(text), 'JSON.parse').to.throw(SyntaxError);
      for (const depth of [0, 1, 2]) {
        for (const pieceSize of [0, 1, 3]) {
          const reader = new JsonStream(FORMAT, {}, () => {}, depth);
          const bytes = utf8(text);
          if (pieceSize === 0) reader.write(bytes);
          else for (let offset = 0; offset < bytes.length; offset += pieceSize) reader.write(bytes.subarray(offset, offset + pieceSize));
          expect(() => reader.end(), `depth ${depth}, pieces of ${pieceSize}`).to.throw(
            MalformedResultError,
            /^The file is not valid JSON \(expected a test report\): /,
          );
        }
      }
    });
  }

  it('gives the same values when the writer reuses its buffer after each write', () => {
    const text = VALID_DOCUMENTS[1]!;
    const bytes = utf8(text);
    const buffer = new Uint8Array(5);
    const reader = new JsonStream(FORMAT, {}, () => {}, 2);
    for (let offset = 0; offset < bytes.length; offset += buffer.length) {
      const piece = bytes.subarray(offset, offset + buffer.length);
      buffer.set(piece);
      reader.write(buffer.subarray(0, piece.length));
      buffer.fill(0x41);
    }
    expect(reader.end()).to.deep.equal(JSON.parse(text));
  });

  it('holds the bytes of values that span writes in one buffer for the whole document, not a new one per value', () => {
    // 20 alerts of 2 MiB each (one long string, as ZAP's otherinfo or evidence), arriving in 64 KiB pieces.
    const alert = JSON.stringify({ pluginid: '7', otherinfo: 'x'.repeat(2 * 1024 * 1024) });
    const bytes = utf8(`{"site":[{"alerts":[${Array.from({ length: 20 }, () => alert).join(',')}]}]}`);
    const pieces = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, index) => bytes.subarray(index * 65536, (index + 1) * 65536));
    const allocated: number[] = [];
    const originals = { alloc: Buffer.alloc, allocUnsafe: Buffer.allocUnsafe, allocUnsafeSlow: Buffer.allocUnsafeSlow };
    const spy = <F extends (size: number, ...rest: never[]) => Buffer>(original: F) =>
      ((size: number, ...rest: never[]) => {
        allocated.push(size);
        return original.call(Buffer, size, ...rest);
      }) as unknown as F;
    let alerts = 0;
    const reader = new JsonStream(FORMAT, { maxBytes: bytes.length }, (completed) => (alerts += completed.depth === 4 ? 1 : 0), 4);
    Object.assign(Buffer, { alloc: spy(originals.alloc), allocUnsafe: spy(originals.allocUnsafe), allocUnsafeSlow: spy(originals.allocUnsafeSlow) });
    try {
      for (const piece of pieces) reader.write(piece);
    } finally {
      Object.assign(Buffer, originals);
    }
    reader.end();
    expect(alerts).to.equal(20);
    const total = allocated.reduce((sum, size) => sum + size, 0);
    // Growing by doubling to hold the largest value allocates under 4x it, once; a buffer grown per value would be 20 times that.
    expect(total, `allocated ${allocated.join(', ')}`).to.be.below(4 * alert.length);
  });

  it('refuses a value at the read depth over maxValueBytes at the write that passes the cap, naming where it is', () => {
    const reader = new JsonStream(FORMAT, { maxValueBytes: 1000 }, () => {}, 4);
    reader.write(utf8('{"site":[{"alerts":[{"a":"small"},{"a":"'));
    reader.write(utf8('x'.repeat(900)));
    expect(() => reader.write(utf8('x'.repeat(200)))).to.throw(
      MalformedResultError,
      /^The file holds a single value larger than 1000 bytes \(at 'site\[0\]\.alerts\[1\]'\); no test report holds one that large\.$/,
    );
    expect(() => reader.end(), 'end after the refusal').to.throw(MalformedResultError, /single value larger than/);
  });

  it('refuses a value over maxValueBytes that arrives in one write', () => {
    const reader = new JsonStream(FORMAT, { maxValueBytes: 100 }, () => {}, 1);
    expect(() => reader.write(utf8(`[${JSON.stringify({ a: 'y'.repeat(200) })}]`))).to.throw(
      MalformedResultError,
      /single value larger than 100 bytes \(at '\[0\]'\)/,
    );
  });

  it('counts nesting inside a value read whole against the depth cap', () => {
    const reader = new JsonStream(FORMAT, { maxDepth: 10 }, () => {}, 2);
    expect(() => reader.write(utf8(`{"a":[${'['.repeat(9)}`))).to.throw(MalformedResultError, /more than 10 levels deep/);
    const within = new JsonStream(FORMAT, { maxDepth: 10 }, () => {}, 2);
    within.write(utf8(`{"a":[${'['.repeat(8)}${']'.repeat(8)}]}`));
    expect(within.end()).to.deep.equal({ a: [[[[[[[[[]]]]]]]]] });
  });

  it('counts a string split after a backslash as one string, and its escaped quote as part of it', () => {
    const text = '{"a":[{"b":"x\\"y\\\\"}]}';
    for (let split = 1; split < text.length; split++) {
      const reader = new JsonStream(FORMAT, {}, () => {}, 2);
      reader.write(utf8(text.slice(0, split)));
      reader.write(utf8(text.slice(split)));
      expect(reader.end(), `split at ${split}`).to.deep.equal({ a: [{ b: 'x"y\\' }] });
    }
  });

  it('finds the end of strings full of backslashes and quotes, split anywhere', () => {
    const random = seededRandom(7);
    const alphabet = ['\\', '"', 'a', 'é', '\n', '}', ']', '\\"'];
    for (let round = 0; round < 200; round++) {
      const text = () => Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const document = { [text()]: [{ [text()]: text(), k: [text(), { x: text() }] }, text()], z: text() };
      const bytes = utf8(JSON.stringify(document));
      const pieceSize = 1 + Math.floor(random() * 6);
      for (const depth of [1, 2, 3]) expect(stream(bytes, depth, pieceSize).document, `round ${round}`).to.deep.equal(document);
    }
  });

  it('checks the bytes after a syntax error against the caps, as the whole file would be', () => {
    const reader = new JsonStream(FORMAT, { maxDepth: 10 }, () => {}, 2);
    reader.write(utf8('{"a":1,,'));
    expect(() => reader.write(utf8('['.repeat(20)))).to.throw(MalformedResultError, /more than 10 levels deep/);
  });

  it('refuses a syntax error inside a value read whole only at the end, naming where that value starts', () => {
    const reader = new JsonStream(FORMAT, {}, () => {}, 2);
    reader.write(utf8('{"a":[{"b":1},{"b":tru}]'));
    reader.write(utf8('}'));
    expect(() => reader.end()).to.throw(MalformedResultError, /in the value that starts at byte 14\)\.$/);
  });
});

describe('cappedPlainText (the first characters of a long HTML text as plain text)', () => {
  const pieces = [
    '<p>',
    '</p>',
    '<br>',
    '<script>x<y</script>',
    '<!-- c -->',
    '&lt;script&gt;',
    '&amp;',
    '&#x1F600;',
    '&nbsp;',
    ' ',
    '\n',
    '\r\n',
    'word',
    'é',
    '😀',
    '<div class="a>b">',
    '<',
    '&',
    '<a href=x>link</a>',
  ];
  it('is the same as converting the whole text and then cutting it, for texts around the cut', () => {
    const random = seededRandom(17);
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(random() * 3000);
      let html = '';
      while (html.length < length) html += pieces[Math.floor(random() * pieces.length)];
      const maxChars = 1 + Math.floor(random() * 400);
      expect(cappedPlainText(html, maxChars, capText), `round ${round}`).to.equal(capText(htmlToPlainText(html), maxChars));
    }
  });
});
