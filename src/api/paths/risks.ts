import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { AcceptRisk, Risk } from '../schemas/risks.js';
import { BODY_ERRORS, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';

const RiskResponse = dataEnvelope(Risk).meta({ id: 'RiskResponse' });

const RiskListQuery = ListQuery.extend({
  sort: z
    .string()
    .optional()
    .meta({
      description:
        'One field, optionally followed by a space and asc or desc (default asc): threat_level (by severity: desc gives CRITICAL first), first_detected_at, last_detected_at, target (the address). ' +
        'Risks with the same value follow by creation, in the same direction (with desc, newest first). Two or more fields give 400. Without sort, newest first by creation. A page_token continues only the sort it came from.',
      example: 'threat_level desc',
    }),
});

export function registerRiskPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/risks',
    operationId: 'listRisks',
    tags: ['Risks'],
    summary: 'List risks',
    description:
      "Closed risks included. Newest first by the time the risk was first created, not by latest detection, unless sort says otherwise. OpenVAS risks below the account's minimum Quality of Detection are left out.",
    request: {
      query: RiskListQuery.meta({
        description:
          "filters keys: target_id, status, tags (the target's), risk_definition.scan_type, risk_definition.threat_level, risk_definition.title (exact).",
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
    description:
      "Marks the risk accepted (a false positive or by design) and adds an accepted_by entry with the note; accepted risks no longer lower the target's health score. Sends risk.updated.",
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
