/** Risks (SPEC.md, Risks; CONTRACT.md accept/unaccept): listing, reading and accepting them. */
import type { Account } from '../domain/accounts/account.js';
import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters } from '../domain/lists/list-query.js';
import { MAX_ACCEPT_NOTE_LENGTH, type RiskView } from '../domain/risks/risk.js';
import type { ListParams, ListResult, Paginator } from './pagination.js';
import { RISK_FILTER_KEYS, type EventOutbox, type RiskRepository, type TargetRepository } from './ports.js';
import type { RiskHistory } from './risk-history.js';

export class RisksService {
  constructor(
    private readonly risks: RiskRepository,
    private readonly targets: TargetRepository,
    private readonly history: RiskHistory,
    private readonly outbox: EventOutbox,
    private readonly paginator: Paginator,
  ) {}

  /** Newest first by creation; CLOSED risks included; OpenVAS risks below the account's minimum QoD left out. */
  list<R>(account: Account, params: ListParams, present: (risk: RiskView) => R): ListResult<R> {
    const scope = `${account.id}:risks`;
    const page = this.risks.list(account.id, {
      filters: parseFilters(params.filters, RISK_FILTER_KEYS),
      pageSize: pageSizeFrom(params.page_size),
      after: this.paginator.cursorFrom(scope, 'created_at:desc', params.page_token),
      minOpenvasQod: account.minOpenvasQod,
    });
    return this.paginator.resultOf(scope, 'created_at:desc', page, present);
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
