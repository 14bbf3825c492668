import { SourceCreate } from '../../api/schemas/sources.js';
import type { SourcesService } from '../../app/sources-service.js';
import type { Operation } from '../api-router.js';
import { presentSource } from '../../app/present/source.js';
import { listQuery, parseBody } from './input.js';

export function sourceOperations(sources: SourcesService): Record<string, Operation> {
  return {
    createSource: ({ principal, body }) => ({ data: presentSource(sources.create(principal.account, parseBody(SourceCreate, body))) }),
    listSources: ({ principal, query }) => {
      const page = sources.list(principal.account, listQuery(query), presentSource);
      return { data: page.items, ...(page.nextPageToken === undefined ? {} : { next_page_token: page.nextPageToken }) };
    },
  };
}
