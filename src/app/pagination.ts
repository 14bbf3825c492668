/**
 * Turns page tokens into store cursors and back, for every list. The scope
 * binds a token to one account's list of one resource.
 */
import { PageTokenCodec, type CursorValue } from '../domain/lists/page-token.js';
import type { Page } from './ports.js';

export interface ListParams {
  page_token?: string | undefined;
  page_size?: number | undefined;
  filters?: string | undefined;
}

export interface ListResult<T> {
  items: T[];
  nextPageToken: string | undefined;
}

export class Paginator {
  constructor(private readonly codec: PageTokenCodec) {}

  cursorFrom(scope: string, order: string, token: string | undefined): CursorValue[] | undefined {
    if (token === undefined || token === '') return undefined;
    return this.codec.decode(scope, token, order).values;
  }

  resultOf<T, R>(scope: string, order: string, page: Page<T>, present: (item: T) => R): ListResult<R> {
    return {
      items: page.items.map(present),
      nextPageToken: page.nextCursor === undefined ? undefined : this.codec.encode(scope, { order, values: page.nextCursor }),
    };
  }
}
