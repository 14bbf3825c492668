import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { AcceptRisk, Risk } from '../schemas/risks.js';
import { BODY_ERRORS, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';

const RiskResponse = dataEnvelope(Risk).meta({ id: 'RiskResponse' });

export function registerRiskPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/risks',
    operationId: 'listRisks',
    tags: ['Risks'],
    summary: 'List risks',
    description:
      "Closed risks included. Newest first by the time the risk was first created, not by latest detection. OpenVAS risks below the account's minimum Quality of Detection are left out.",
    request: {
      query: ListQuery.meta({
        description: 'filters keys: target_id, status, tags (the target\'s), risk_definition.scan_type, risk_definition.threat_level, risk_definition.title (exact).',
      }),
    },
    responses: { 200: json(listEnvelope(Risk).meta({ id: 'RiskList' }), 'A page of risks.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/risks/{id}',
    operationId: 'getRisk',
    tags: ['Risks'],
    summary: 'Get a risk',
    request: { params: IdParam },
    responses: { 200: json(RiskResponse, 'The risk.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/risks/{id}/accept',
    operationId: 'acceptRisk',
    tags: ['Risks'],
    summary: 'Accept a risk',
    description: 'Marks the risk accepted (a false positive or by design) and adds an accepted_by entry with the note; accepted risks no longer lower the target\'s health score. Sends risk.updated.',
    request: { params: IdParam, body: jsonBody(AcceptRisk) },
    responses: { 200: json(RiskResponse, 'The accepted risk.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/risks/{id}/unaccept',
    operationId: 'unacceptRisk',
    tags: ['Risks'],
    summary: 'Un-accept a risk',
    description: 'Clears is_accepted (the accepted_by history stays). Sends risk.updated.',
    request: { params: IdParam },
    responses: { 200: json(RiskResponse, 'The risk.'), ...STANDARD_ERRORS },
  });
}
