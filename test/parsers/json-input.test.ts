import { expect } from 'chai';
import { z } from 'zod';
import { MalformedResultError } from '../../src/domain/errors.js';
import { DEFAULT_MAX_BYTES, JsonInput } from '../../src/parsers/json/json-input.js';
import { checkShape } from '../../src/parsers/json/shape-check.js';
import { htmlToPlainText, urlsInText } from '../../src/parsers/json/html-text.js';
import { utf8 } from './json-parser-checks.js';

function inputOf(text: string | Uint8Array, options = {}): JsonInput {
  const input = new JsonInput('test report', options);
  input.write(typeof text === 'string' ? utf8(text) : text);
  return input;
}

describe('JSON input plumbing', () => {
  it('refuses the write that passes the default 25 MiB cap', () => {
    const input = new JsonInput('test report');
    const mebibyte = new Uint8Array(1024 * 1024).fill(0x20);
    for (let written = 0; written < DEFAULT_MAX_BYTES; written += mebibyte.length) input.write(mebibyte);
    expect(() => input.write(new Uint8Array([0x20]))).to.throw(MalformedResultError, /larger than the 25 MiB limit/);
  });

  it('decodes a multi-byte character split between writes', () => {
    const bytes = utf8('{"name":"Ünïcödé 日本語 🔐"}');
    for (let offset = 1; offset < bytes.length; offset++) {
      const input = new JsonInput('test report');
      input.write(bytes.subarray(0, offset));
      input.write(bytes.subarray(offset));
      expect(input.parseDocument()).to.deep.equal({ name: 'Ünïcödé 日本語 🔐' });
    }
  });

  it('reads escapes, brackets in strings and multi-byte characters written byte by byte', () => {
    const document = { a: 'x\\"[[[[{{', b: '\\', c: 'é 日 🔐', d: [[{ e: '"]]' }]] };
    const bytes = utf8(JSON.stringify(document));
    const input = new JsonInput('test report', { maxDepth: 4 });
    for (let offset = 0; offset < bytes.length; offset++) input.write(bytes.subarray(offset, offset + 1));
    expect(input.parseDocument()).to.deep.equal(document);
  });

  it('keeps the text one byte per character for V8 without changing what it parses to', () => {
    const document = { a: '日本 🔐 ☃ é', b: '\\日', c: 'x\\\\🔐' };
    const bytes = utf8(JSON.stringify(document));
    for (let offset = 1; offset < bytes.length; offset++) {
      const input = new JsonInput('test report');
      input.write(bytes.subarray(0, offset));
      input.write(bytes.subarray(offset));
      expect(input.parseDocument(), `split at ${offset}`).to.deep.equal(document);
    }
    expect(inputOf(utf8(JSON.stringify({ a: '日本 🔐 ☃' }))).text()).to.match(/^[\u0000-\u00ff]*$/);
  });

  it('still refuses a backslash before a non-ASCII character, which is no JSON escape', () => {
    const input = new JsonInput('test report');
    input.write(utf8('{"a":"x\\'));
    input.write(utf8('日"}'));
    expect(() => input.parseDocument()).to.throw(MalformedResultError, /not valid JSON/);
    expect(() => inputOf('{"a":"\\🔐"}').parseDocument()).to.throw(MalformedResultError, /not valid JSON/);
  });

  it('refuses a file that ends inside a multi-byte character', () => {
    expect(() => inputOf(utf8('"日').subarray(0, 3)).parseDocument()).to.throw(MalformedResultError, /not UTF-8 text/);
  });

  it('drops a UTF-8 byte-order mark', () => {
    expect(inputOf(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('[1]')])).parseDocument()).to.deep.equal([1]);
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(() => inputOf(new Uint8Array([0x7b, 0xc3, 0x28])).parseDocument()).to.throw(MalformedResultError, /not UTF-8 text/);
  });

  it('refuses bytes that are not UTF-8 while a big file is still being written', () => {
    const input = new JsonInput('test report');
    input.write(new Uint8Array([0x22, 0xff]));
    const spaces = new Uint8Array(64 * 1024).fill(0x20);
    expect(() => {
      for (let index = 0; index < 4; index++) input.write(spaces);
    }).to.throw(MalformedResultError, /not UTF-8 text/);
  });

  it('refuses a UTF-16 file', () => {
    const utf16 = new Uint8Array([0xff, 0xfe, 0x5b, 0x00, 0x5d, 0x00]);
    expect(() => inputOf(utf16).parseDocument()).to.throw(MalformedResultError, /not UTF-8/);
  });

  it('counts nesting across chunks and ignores brackets inside strings', () => {
    const input = new JsonInput('test report', { maxDepth: 3 });
    input.write(utf8('[[["[[[[[[\\"'));
    input.write(utf8('"]]]'));
    expect(input.parseDocument()).to.deep.equal([[['[[[[[["']]]);
    expect(() => inputOf('[[[[1]]]]', { maxDepth: 3 })).to.throw(MalformedResultError, /more than 3 levels deep/);
  });

  it('says the file is empty when a document is required', () => {
    expect(() => inputOf(' \n\t').parseDocument()).to.throw(MalformedResultError, /^The file is empty; expected a test report\.$/);
  });

  it('names truncated JSON as invalid JSON', () => {
    expect(() => inputOf('{"site": [').parseDocument()).to.throw(MalformedResultError, /^The file is not valid JSON \(expected a test report\): /);
  });

  it('says when a JSON parser was given XML', () => {
    expect(() => inputOf('<?xml version="1.0"?><a/>').parseDocument()).to.throw(MalformedResultError, /looks like XML/);
  });

  it('reads JSON Lines with blank lines and a last line without newline', () => {
    const records = [...inputOf('{"a":1}\n\n  \r\n{"a":2}\r\n{"a":3}').records()];
    expect(records).to.deep.equal([
      { where: 'line 1', value: { a: 1 } },
      { where: 'line 4', value: { a: 2 } },
      { where: 'line 5', value: { a: 3 } },
    ]);
  });

  it('names the line that is not valid JSON', () => {
    expect(() => [...inputOf('{"a":1}\n{"a":2}\n{"a":\n').records()]).to.throw(MalformedResultError, /^Line 3 is not valid JSON: /);
  });

  it('reads a top-level array as records and an empty file as none', () => {
    expect([...inputOf(' [{"a":1},{"a":2}]').records()].map((record) => record.where)).to.deep.equal(['item 1', 'item 2']);
    expect([...inputOf('').records()]).to.deep.equal([]);
  });

  it('keeps the first error for later calls', () => {
    const input = new JsonInput('test report', { maxBytes: 2 });
    expect(() => input.write(utf8('[1,2]'))).to.throw(MalformedResultError);
    expect(() => input.parseDocument()).to.throw(MalformedResultError, /larger than the 2 bytes limit/);
  });

  describe('shape checks', () => {
    const schema = z.object({ site: z.array(z.object({ port: z.number() })) });
    const expectation = { format: 'ZAP Traditional JSON report', expected: "an object with a 'site' array" };

    it('describe a wrong top-level value', () => {
      expect(() => checkShape([], schema, expectation)).to.throw(
        MalformedResultError,
        "Expected an object with a 'site' array (ZAP Traditional JSON report); got an empty array.",
      );
    });

    it('name the path and what was found there', () => {
      expect(() => checkShape({ site: 'x' }, schema, expectation)).to.throw(MalformedResultError, /'site' is a string, not an array/);
      expect(() => checkShape({ site: [{ port: {} }] }, schema, expectation)).to.throw(/'site\[0\]\.port' is an object, not a number/);
    });

    it('list the keys of an object that lacks the expected one', () => {
      expect(() => checkShape({ 'template-id': 'x', info: {} }, schema, { ...expectation, where: 'line 2' })).to.throw(
        MalformedResultError,
        /^At line 2: expected .*; 'site' is missing \(the object has template-id, info\)\.$/,
      );
    });
  });
});

describe('HTML to plain text', () => {
  it('keeps paragraphs as lines and decodes the entities ZAP writes', () => {
    expect(htmlToPlainText('<p>Use &quot;X&quot; &amp; Y&#39;s &lt;tag&gt;.</p><p>Second&nbsp;line</p>')).to.equal('Use "X" & Y\'s < tag>.\nSecond line');
  });

  it('removes scripts, event handlers and comments', () => {
    const text = htmlToPlainText('a<script>alert(1)</script>b<img src=x onerror=alert(2)>c<!-- x -->d<style>p{}</style>');
    expect(text).to.equal('a bc d');
  });

  it('never leaves anything a browser would read as a tag, even after decoding', () => {
    for (const html of ['&lt;script&gt;alert(1)&lt;/script&gt;', '<img src=x onerror=alert(1)', '&#60;img onerror=x&#62;', '<<script>a']) {
      expect(htmlToPlainText(html)).not.to.match(/<[a-zA-Z/!?]/);
    }
  });

  it('keeps a comparison that is not a tag', () => {
    expect(htmlToPlainText('<p>jQuery < 3.5 and 2 > 1</p>')).to.equal('jQuery < 3.5 and 2 > 1');
  });

  // Catastrophic backtracking would not finish within the test timeout; a linear pass does.
  it('finishes on unterminated tags and long punctuation runs, leaving no tag behind', () => {
    expect(htmlToPlainText('<p <div <script <br '.repeat(20_000))).not.to.match(/<[a-zA-Z/!?]/);
    expect(htmlToPlainText('<script>'.repeat(20_000))).not.to.match(/<[a-zA-Z/!?]/);
    expect(urlsInText(`https://a.example/${'.,'.repeat(100_000)}x`)).to.have.length(1);
  });

  it('finds the URLs of a ZAP reference field', () => {
    expect(urlsInText(htmlToPlainText('<p>https://a.example/x?y=1&amp;z=2</p><p>http://b.example/.</p>'))).to.deep.equal([
      'https://a.example/x?y=1&z=2',
      'http://b.example/',
    ]);
  });
});
