/**
 * Opaque, signed page tokens for keyset pagination. A token carries the sort
 * key values of the last row of a page; it is bound to the list (account and
 * resource) and the sort order it was made for, and signed so that a forged
 * or altered token is refused instead of silently paging wrong.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '../errors.js';

export type CursorValue = string | number;

export interface PageCursor {
  /** Identifies the ordering the values belong to (e.g. "label:asc,seq:desc"). */
  order: string;
  values: CursorValue[];
}

const INVALID = 'page_token is not valid for this list; start again without page_token';

export class PageTokenCodec {
  constructor(private readonly key: Uint8Array) {
    if (key.length < 32) throw new Error('page token key must be at least 32 bytes');
  }

  encode(scope: string, cursor: PageCursor): string {
    const payload = Buffer.from(JSON.stringify([cursor.order, cursor.values])).toString('base64url');
    return `${payload}.${this.sign(scope, payload)}`;
  }

  /** Returns the cursor, or throws InvalidRequestError for a forged, garbled or foreign token. */
  decode(scope: string, token: string, expectedOrder: string): PageCursor {
    const [payload, signature, ...rest] = token.split('.');
    if (payload === undefined || signature === undefined || rest.length > 0) throw new InvalidRequestError(INVALID);
    // Compare the signature as text: decoding base64 first would let padding,
    // stray characters or the unused low bits of the last character vary.
    const expected = Buffer.from(this.sign(scope, payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidRequestError(INVALID);
    const [order, values] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, CursorValue[]];
    if (order !== expectedOrder) {
      throw new InvalidRequestError('page_token was made for another sort order; repeat the request with the same sort as the first page');
    }
    return { order, values };
  }

  private sign(scope: string, payload: string): string {
    return createHmac('sha256', this.key).update(scope).update('\0').update(payload).digest('base64url');
  }
}
