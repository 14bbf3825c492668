import type { Filters } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Source } from '../../domain/sources/source.js';
import type { Page } from './lists.js';

export const SOURCE_FILTER_KEYS = ['source_type', 'name'] as const;
export type SourceFilterKey = (typeof SOURCE_FILTER_KEYS)[number];

export interface SourceListQuery {
  filters: Filters<SourceFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
}

/** Sources of uploaded results, and which import Scan came from which source. */
export interface SourceRepository {
  insert(source: Source): void;
  findById(accountId: string, id: string): Source | undefined;
  list(accountId: string, query: SourceListQuery): Page<Source>;
  /** Records that the Scan was uploaded into the source; runs in the caller's transaction. */
  linkScan(scanId: string, sourceId: string): void;
}
