import type { CursorValue } from '../../domain/lists/page-token.js';

export interface Page<T> {
  items: T[];
  /** Sort key values of the last item when more items follow. */
  nextCursor: CursorValue[] | undefined;
  /**
   * Sort key values of any item: lists whose items can be large give it, so
   * that a page can end early at its byte budget and continue after that item.
   */
  cursorAt?: (index: number) => CursorValue[];
}
