/**
 * Turns page tokens into store cursors and back, for every list. The scope
 * binds a token to one account's list of one resource.
 */
import { PageTokenCodec, type CursorValue } from '../domain/lists/page-token.js';
import type { Page, RenderedPage } from './ports.js';

export interface ListParams {
  page_token?: string | undefined;
  page_size?: number | undefined;
  filters?: string | undefined;
}

/** Lists that also take `sort` (targets, risks). */
export interface SortedListParams extends ListParams {
  sort?: string | undefined;
}

export interface ListResult<T> {
  items: T[];
  nextPageToken: string | undefined;
}

/** A list page rendered as JSON by the store: the inside of its `data` array, as bytes. */
export interface RenderedListResult {
  body: Uint8Array;
  nextPageToken: string | undefined;
}

/**
 * A list page sent as it is rendered: the inside of its `data` array in
 * pieces (sendStreamedList writes each as it comes, waiting for the client
 * to take it), its next_page_token known before the first piece.
 */
export interface StreamedListResult {
  pieces: AsyncIterable<string>;
  nextPageToken: string | undefined;
}

export class Paginator {
  constructor(private readonly codec: PageTokenCodec) {}

  cursorFrom(scope: string, order: string, token: string | undefined): CursorValue[] | undefined {
    if (token === undefined || token === '') return undefined;
    return this.codec.decode(scope, token, order).values;
  }

  renderedResultOf(scope: string, order: string, page: RenderedPage): RenderedListResult {
    return { body: page.body, nextPageToken: this.tokenFor(scope, order, page.nextCursor) };
  }

  tokenFor(scope: string, order: string, cursor: CursorValue[] | undefined): string | undefined {
    return cursor === undefined ? undefined : this.codec.encode(scope, { order, values: cursor });
  }

  resultOf<T, R>(scope: string, order: string, page: Page<T>, present: (item: T) => R): ListResult<R> {
    const { items, nextCursor } =
      page.cursorAt === undefined ? { items: page.items.map(present), nextCursor: page.nextCursor } : withinBudget(page, present, page.cursorAt);
    return {
      items,
      nextPageToken: this.tokenFor(scope, order, nextCursor),
    };
  }
}

/**
 * A list page holds at most about this many bytes of JSON (README, Security):
 * once its items reach it the page ends early, with a next_page_token that
 * continues after the last item sent. A page always holds at least one item.
 */
export const LIST_PAGE_BYTE_BUDGET = 4 * 1024 * 1024;

function withinBudget<T, R>(
  page: Page<T>,
  present: (item: T) => R,
  cursorAt: (index: number) => CursorValue[],
): { items: R[]; nextCursor: CursorValue[] | undefined } {
  const items: R[] = [];
  let bytes = 0;
  for (const [index, item] of page.items.entries()) {
    const presented = present(item);
    // Characters, not bytes: near enough for a budget, and cheaper than encoding. Presenters that render JSON text (targets) are measured as they are.
    bytes += typeof presented === 'string' ? presented.length : JSON.stringify(presented).length;
    if (items.length > 0 && bytes > LIST_PAGE_BYTE_BUDGET) return { items, nextCursor: cursorAt(index - 1) };
    items.push(presented);
  }
  return { items, nextCursor: page.nextCursor };
}
