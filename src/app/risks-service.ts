/** Risks (SPEC.md, Risks; CONTRACT.md accept/unaccept): listing, reading and accepting them. */
import type { Account } from '../domain/accounts/account.js';
import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters, parseSort, sortOrderName, type Filters, type SortField } from '../domain/lists/list-query.js';
import { MAX_ACCEPT_NOTE_LENGTH, type RiskView } from '../domain/risks/risk.js';
import type { ListResult, Paginator, SortedListParams } from './pagination.js';
import {
  RISK_FILTER_KEYS,
  RISK_SORT_FIELDS,
  type EventOutbox,
  type RiskFilterKey,
  type RiskListQuery,
  type RiskRepository,
  type RiskSortField,
  type TargetRepository,
} from './ports.js';
import type { RiskHistory } from './risk-history.js';

/** The dashboard's list: the API's filters, plus accepted or not and a piece of the target's address or label. */
export interface RiskSearch {
  filters: Filters<RiskFilterKey>;
  sort?: Array<SortField<RiskSortField>> | undefined;
  accepted?: boolean | undefined;
  targetContains?: string | undefined;
  pageSize: number;
  pageToken?: string | undefined;
}

export class RisksService {
  constructor(
    private readonly risks: RiskRepository,
    private readonly targets: TargetRepository,
    private readonly history: RiskHistory,
    private readonly outbox: EventOutbox,
    private readonly paginator: Paginator,
  ) {}

  /** Newest first by creation unless sorted; CLOSED risks included; OpenVAS risks below the account's minimum QoD left out. */
  list<R>(account: Account, params: SortedListParams, present: (risk: RiskView) => R): ListResult<R> {
    const query = { filters: parseFilters(params.filters, RISK_FILTER_KEYS), sort: parseRiskSort(params.sort), pageSize: pageSizeFrom(params.page_size) };
    return this.page(account, query, params.page_token, present);
  }

  search<R>(account: Account, search: RiskSearch, present: (risk: RiskView) => R): ListResult<R> {
    const { pageToken, ...query } = search;
    return this.page(account, query, pageToken, present);
  }

  private page<R>(
    account: Account,
    query: Omit<RiskListQuery, 'after' | 'minOpenvasQod'>,
    pageToken: string | undefined,
    present: (risk: RiskView) => R,
  ): ListResult<R> {
    const scope = `${account.id}:risks`;
    const order = sortOrderName(query.sort ?? [], 'created_at:desc');
    const after = this.paginator.cursorFrom(scope, order, pageToken);
    const page = this.risks.list(account.id, { ...query, after, minOpenvasQod: account.minOpenvasQod });
    return this.paginator.resultOf(scope, order, page, present);
  }

  get(account: Account, id: string): RiskView {
    const risk = this.risks.findView(account.id, id);
    if (risk === undefined) throw new NotFoundError('risk', id);
    return risk;
  }

  /** Accepts the risk (a false positive, or by design) with a note; accepting again adds another entry. */
  accept(account: Account, id: string, note: string): RiskView {
    const trimmed = note.trim();
    if (trimmed === '') throw new InvalidRequestError('note must say why the risk is accepted');
    if (trimmed.length > MAX_ACCEPT_NOTE_LENGTH) throw new InvalidRequestError(`note must be at most ${MAX_ACCEPT_NOTE_LENGTH} characters`);
    return this.setAccepted(account, id, trimmed);
  }

  unaccept(account: Account, id: string): RiskView {
    return this.setAccepted(account, id, undefined);
  }

  private setAccepted(account: Account, id: string, note: string | undefined): RiskView {
    return this.history.transaction(() => {
      const risk = this.get(account, id);
      const target = this.targets.findById(account.id, risk.targetId);
      if (target === undefined) throw new NotFoundError('risk', id);
      this.outbox.append([this.history.setAccepted(risk, target, note)]);
      return this.get(account, id);
    });
  }
}

/**
 * Targets' sort syntax; one field at a time, because each order is read
 * walking one index (account, field, seq) and a second field would need a
 * sort of the account's risks for every page. Ties go by creation.
 */
export function parseRiskSort(raw: string | undefined): Array<SortField<RiskSortField>> {
  const sort = parseSort(raw, RISK_SORT_FIELDS);
  if (sort.length > 1)
    throw new InvalidRequestError(`risks sort by one field at a time ('${sort[0]!.field} ${sort[0]!.direction}'); ties are ordered by creation`);
  return sort;
}
