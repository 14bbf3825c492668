/** Sources of uploaded scanner results (SPEC.md, Imported results; Source). */
import { randomUUID } from 'node:crypto';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters } from '../domain/lists/list-query.js';
import { MAX_SOURCE_NAME_LENGTH, type Source, type SourceType } from '../domain/sources/source.js';
import type { ListParams, ListResult, Paginator } from './pagination.js';
import { SOURCE_FILTER_KEYS, type SourceRepository } from './ports.js';

export interface NewSource {
  source_type: SourceType;
  name: string;
}

export class SourcesService {
  constructor(
    private readonly sources: SourceRepository,
    private readonly paginator: Paginator,
    private readonly clock: Clock,
  ) {}

  create(account: Account, body: NewSource): Source {
    const name = body.name.trim();
    if (name === '' || name.length > MAX_SOURCE_NAME_LENGTH) {
      throw new InvalidRequestError(`name must be 1 to ${MAX_SOURCE_NAME_LENGTH} characters, not blank`);
    }
    const source: Source = { id: randomUUID(), accountId: account.id, sourceType: body.source_type, name, createdAt: this.clock.now().toISOString() };
    this.sources.insert(source);
    return source;
  }

  list<R>(account: Account, params: ListParams, present: (source: Source) => R): ListResult<R> {
    const scope = `${account.id}:sources`;
    const page = this.sources.list(account.id, {
      filters: parseFilters(params.filters, SOURCE_FILTER_KEYS),
      pageSize: pageSizeFrom(params.page_size),
      after: this.paginator.cursorFrom(scope, 'created_at:desc', params.page_token),
    });
    return this.paginator.resultOf(scope, 'created_at:desc', page, present);
  }

  /**
   * The source an upload goes into. An unknown id, or another account's, is
   * a 400 naming the field rather than a 404: the path exists, a field is wrong.
   */
  importedSource(account: Account, id: string): Source {
    const source = this.sources.findById(account.id, id);
    if (source?.sourceType !== 'IMPORTED') {
      throw new InvalidRequestError(`source_id '${id.slice(0, 80)}' is not an IMPORTED source of this account; create one with POST /v1/sources`);
    }
    return source;
  }

  /** Records that the import Scan came from the source; call inside the upload's transaction. */
  linkScan(scanId: string, source: Source): void {
    this.sources.linkScan(scanId, source.id);
  }
}
