import { expect } from 'chai';
import { jsonLength } from '../../src/parsers/finding-bounds.js';
import { normaliseText, normaliseTextByLines, normaliseTitle } from '../../src/parsers/xml/plain-text.js';
import { seededRandom } from './json-parser-checks.js';

/** Strings drawn from characters that matter to the normalisers and to JSON. */
function randomTexts(seed: number, count: number, only?: RegExp): string[] {
  const all = [
    'a',
    'b',
    'Z',
    '1',
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\n',
    '\r',
    '\r\n',
    '\u00a0',
    '\u2028',
    '\u2029',
    '\u3000',
    '\ufeff',
    '\v',
    '\f',
    '\u200a',
    '\u0085',
    '"',
    '\\',
    '\u0000',
    '\u001f',
    '\u007f',
    'é',
    '日',
    '🔐',
    '\ud800',
    '\udc00',
  ];
  const alphabet = only === undefined ? all : all.filter((character) => only.test(character));
  const random = seededRandom(seed);
  const texts: string[] = [];
  for (let n = 0; n < count; n++) {
    let text = '';
    const length = Math.floor(random() * 40);
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
    texts.push(text);
  }
  return texts;
}

describe('plain text normalisers', () => {
  it('normaliseText gives what trimming line by line gives, for any mix of whitespace', () => {
    const fixed = [
      '',
      ' ',
      '\n',
      ' a ',
      'a \n b',
      'a\n \nb',
      'a\n\n\n\nb',
      '  a\t\t b  \r\n\r\n\r\n c ',
      '\u00a0a\u00a0\u00a0b\u00a0',
      'x \u2028 y',
      '\ufeffz',
      'p\n \t \n\u00a0\nq',
    ];
    // The second set holds no whitespace but space, tab, no-break space, CR and LF: the whole-text way.
    for (const text of [...fixed, ...randomTexts(17, 20_000), ...randomTexts(21, 20_000, /^(?:[^\s]|[ \t\u00a0\r\n]|\r\n)$/)]) {
      expect(normaliseText(text), JSON.stringify(text)).to.equal(normaliseTextByLines(text));
    }
  });

  it('normaliseTitle gives one line with single spaces, leaving one-line titles as they are', () => {
    for (const text of randomTexts(18, 20_000)) expect(normaliseTitle(text), JSON.stringify(text)).to.equal(text.replace(/\s+/g, ' ').trim());
    const title = 'Open port 22/tcp (ssh OpenSSH 7.4)';
    expect(normaliseTitle(title)).to.equal(title);
  });

  it('jsonLength is the length JSON.stringify writes, or its error', () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -0,
      1.5,
      1e21,
      1e-7,
      -123,
      NaN,
      Infinity,
      9,
      10,
      99,
      100,
      65535,
      999_999_999,
      1e9,
      2 ** 53,
      5.0,
      9.8,
      '',
      'x',
      [],
      {},
      [undefined, () => 1, Symbol('s'), null],
      { a: undefined, b: () => 1, c: 1 },
      { 'k"ey': 'v\\', nested: { list: [1, 'two', { three: [3] }] } },
      { date: new Date(0) },
      [new Map()],
      { toJSON: () => 'short' },
      Object.create(null) as unknown,
      { scripts: [{ id: 'vulners', output: 'line\n\tnext "quoted"' }], cves: ['CVE-2020-1'], is_exploit: false, cvss_score: 9.8 },
      ...randomTexts(19, 2_000).map((text, n) => (n % 2 === 0 ? text : { [text]: [text, n, { text }] })),
    ];
    for (const value of values) expect(jsonLength(value), String(JSON.stringify(value))).to.equal((JSON.stringify(value) as string).length);
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let depth = 0; depth < 40; depth++) at = (at.next = {}) as Record<string, unknown>;
    expect(jsonLength(deep)).to.equal(JSON.stringify(deep).length);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => jsonLength(cycle)).to.throw(TypeError);
    expect(() => jsonLength({ big: 1n })).to.throw(TypeError);
  });
});
