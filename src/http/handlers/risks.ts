import { presentRisk } from '../../app/present/risk.js';
import { AcceptRisk } from '../../api/schemas/risks.js';
import type { RisksService } from '../../app/risks-service.js';
import type { Operation } from '../api-router.js';
import { listQuery, parseBody } from './input.js';

export function riskOperations(risks: RisksService): Record<string, Operation> {
  return {
    listRisks: ({ principal, query }) => {
      const page = risks.list(principal.account, { ...listQuery(query), sort: query.sort }, presentRisk);
      return { data: page.items, ...(page.nextPageToken === undefined ? {} : { next_page_token: page.nextPageToken }) };
    },
    getRisk: ({ principal, params }) => ({ data: presentRisk(risks.get(principal.account, params.id!)) }),
    acceptRisk: ({ principal, params, body }) => ({ data: presentRisk(risks.accept(principal.account, params.id!, parseBody(AcceptRisk, body).note)) }),
    unacceptRisk: ({ principal, params }) => ({ data: presentRisk(risks.unaccept(principal.account, params.id!)) }),
  };
}
