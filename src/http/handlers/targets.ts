import { TargetCreate, TargetUpdate } from '../../api/schemas/targets.js';
import type { TargetsService } from '../../app/targets-service.js';
import type { Operation } from '../api-router.js';
import { parseBody, listQuery } from './input.js';
import { presentTarget } from '../../app/present/target.js';
import { sendRenderedList } from '../send-rendered-list.js';

export function targetOperations(targets: TargetsService): Record<string, Operation> {
  const update: Operation = ({ principal, params, body }) => ({
    data: presentTarget(targets.update(principal.account, params.id!, parseBody(TargetUpdate, body))),
  });
  return {
    createTarget: ({ principal, query, body }) => ({
      data: presentTarget(targets.create(principal.account, parseBody(TargetCreate, body), query.upsert === 'true')),
    }),
    listTargets: ({ principal, query, res }) => {
      const page = targets.listJson(principal.account, { ...listQuery(query), sort: query.sort });
      sendRenderedList(res, page);
      return undefined;
    },
    getTarget: ({ principal, params }) => ({ data: presentTarget(targets.get(principal.account, params.id!)) }),
    updateTarget: update,
    patchTarget: update,
    deleteTarget: ({ principal, params }) => {
      targets.delete(principal.account, params.id!);
      return { data: { id: params.id!, deleted: true } };
    },
  };
}
