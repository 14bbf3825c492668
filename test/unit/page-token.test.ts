import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { PageTokenCodec, type PageCursor } from '../../src/domain/lists/page-token.js';

const KEY = Buffer.alloc(32, 7);
const SCOPE = 'account-1:targets';
const ORDER = 'label:asc,seq:desc';
const CURSOR: PageCursor = { order: ORDER, values: ['Shop', 42] };
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const INVALID = 'page_token is not valid for this list';

/** Another base64url character whose 6-bit value differs in the given bits. */
function flip(char: string, bits: number): string {
  return BASE64URL[BASE64URL.indexOf(char) ^ bits]!;
}
function replaceAt(text: string, index: number, char: string): string {
  return text.slice(0, index) + char + text.slice(index + 1);
}

describe('PageTokenCodec', () => {
  const codec = new PageTokenCodec(KEY);
  const token = codec.encode(SCOPE, CURSOR);
  const [payload, signature] = token.split('.') as [string, string];

  function expectRefused(candidate: string, message: string = INVALID, scope = SCOPE, order = ORDER): void {
    expect(() => codec.decode(scope, candidate, order)).to.throw(InvalidRequestError, message);
  }

  it('round-trips a cursor of strings and numbers', () => {
    expect(codec.decode(SCOPE, token, ORDER)).to.deep.equal(CURSOR);
  });

  it('round-trips an empty list of values and unicode text', () => {
    const unusual: PageCursor = { order: 'x', values: ['bücher "quoted".', -1.5, ''] };
    expect(codec.decode(SCOPE, codec.encode(SCOPE, unusual), 'x')).to.deep.equal(unusual);
  });

  it('makes URL-safe tokens of two parts', () => {
    expect(token).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('decodes a token with a second codec built on the same key', () => {
    expect(new PageTokenCodec(Buffer.from(KEY)).decode(SCOPE, token, ORDER)).to.deep.equal(CURSOR);
  });

  it('refuses a token signed with another key', () => {
    expect(() => new PageTokenCodec(Buffer.alloc(32, 8)).decode(SCOPE, token, ORDER)).to.throw(InvalidRequestError, INVALID);
  });

  const scopes: ReadonlyArray<[string, string]> = [
    ['refuses a token made for another account', 'account-2:targets'],
    ['refuses a token made for another resource of the same account', 'account-1:scans'],
    ['refuses a token whose scope differs only by a suffix', 'account-1:targets2'],
  ];
  for (const [name, otherScope] of scopes) {
    it(name, () => expectRefused(token, INVALID, otherScope));
  }

  it('refuses a token made for another sort order, saying to repeat the sort', () => {
    expectRefused(token, 'page_token was made for another sort order; repeat the request with the same sort', SCOPE, 'label:desc,seq:desc');
  });

  it('refuses a token with any one payload character changed', () => {
    for (let index = 0; index < payload.length; index += 1) {
      expectRefused(`${replaceAt(payload, index, flip(payload[index]!, 1))}.${signature}`);
    }
  });

  it('refuses a token with any one signature character changed in its high bit', () => {
    for (let index = 0; index < signature.length; index += 1) {
      expectRefused(`${payload}.${replaceAt(signature, index, flip(signature[index]!, 32))}`);
    }
  });

  // The 43rd character of a 32-byte HMAC in base64url carries 2 unused bits: a decoder maps 'A' and 'B'
  // to the same bytes, so the signature must be compared as text.
  it('refuses a token whose last signature character is changed in its unused low bits', () => {
    expectRefused(`${payload}.${replaceAt(signature, signature.length - 1, flip(signature.at(-1)!, 1))}`);
  });

  // Buffer.from(..., 'base64url') skips characters outside the alphabet and trailing '=': these altered
  // tokens would decode to the right signature bytes.
  const padded: ReadonlyArray<[string, string]> = [
    ['refuses a token with = appended to the signature', `${token}=`],
    ['refuses a token with a non-base64 character appended to the signature', `${token}*`],
    ['refuses a token with a non-base64 character inserted into the signature', `${payload}.*${signature}`],
  ];
  for (const [name, candidate] of padded) {
    it(name, () => expectRefused(candidate));
  }

  const garbage: ReadonlyArray<[string, string]> = [
    ['refuses the empty string', ''],
    ['refuses a string without a dot', 'abc'],
    ['refuses three parts', 'a.b.c'],
    ['refuses a valid token with a third part appended', `${token}.x`],
    ['refuses two empty parts', '.'],
    ['refuses parts that are not base64', '!!!.???'],
    ['refuses a payload without a signature', `${payload}.`],
    ['refuses a signature without a payload', `.${signature}`],
    ['refuses a token with the parts swapped', `${signature}.${payload}`],
    ['refuses a JSON string passed as a token', '{"order":"label:asc,seq:desc","values":[]}'],
  ];
  for (const [name, candidate] of garbage) {
    it(`${name} with InvalidRequestError, not a crash`, () => expectRefused(candidate));
  }

  const keys: ReadonlyArray<[string, number]> = [
    ['refuses an empty key at construction', 0],
    ['refuses a 31-byte key at construction', 31],
  ];
  for (const [name, length] of keys) {
    it(name, () => expect(() => new PageTokenCodec(Buffer.alloc(length, 1))).to.throw(Error, 'at least 32 bytes'));
  }

  it('accepts a 32-byte key at construction', () => {
    expect(() => new PageTokenCodec(Buffer.alloc(32, 1))).to.not.throw();
  });
});
