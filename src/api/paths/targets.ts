import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { Target, TargetCreate, TargetUpdate } from '../schemas/targets.js';
import { BODY_ERRORS, Deleted, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';

const TargetResponse = dataEnvelope(Target).meta({ id: 'TargetResponse' });

const TargetListQuery = ListQuery.extend({
  sort: z.string().optional().meta({
    description:
      'One or more comma-separated fields, each optionally followed by a space and asc or desc (default asc): label, target, created_at, last_scanned. Without sort, newest first. Targets never scanned sort as earliest for last_scanned.',
    example: 'last_scanned desc,label asc',
  }),
}).meta({ description: 'filters keys: tags (any of the tags), label (exact labels), target (exact addresses).' });

export function registerTargetPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/targets',
    operationId: 'createTarget',
    tags: ['Targets'],
    summary: 'Create a target',
    description:
      'Validates the target: a public IPv4 address, a fully qualified domain name, or an http(s) URL whose host is one of those. Private and reserved IPv4 ranges (the IANA special-purpose registry and multicast), IPv6, CIDR ranges, other schemes, URLs with credentials and names under .localhost, .local, .internal, .home.arpa and .onion give 400. Creating a target that exists gives 400 unless upsert=true, which updates it with the sent label, tags and scanner_settings and returns it.',
    request: {
      query: z.object({ upsert: z.enum(['true', 'false']).optional().meta({ description: 'When true, an existing target with the same address is updated and returned instead of giving 400.' }) }),
      body: jsonBody(TargetCreate),
    },
    responses: { 200: json(TargetResponse, 'The created (or, with upsert, updated) target.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/targets',
    operationId: 'listTargets',
    tags: ['Targets'],
    summary: 'List targets',
    request: { query: TargetListQuery },
    responses: { 200: json(listEnvelope(Target).meta({ id: 'TargetList' }), 'A page of targets.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/targets/{id}',
    operationId: 'getTarget',
    tags: ['Targets'],
    summary: 'Get a target',
    request: { params: IdParam },
    responses: { 200: json(TargetResponse, 'The target.'), ...STANDARD_ERRORS },
  });
  for (const method of ['put', 'patch'] as const) {
    registry.registerPath({
      method,
      path: '/v1/targets/{id}',
      operationId: method === 'put' ? 'updateTarget' : 'patchTarget',
      tags: ['Targets'],
      summary: method === 'put' ? 'Update a target' : 'Update a target (same as PUT)',
      description:
        'Omitted fields keep their values; the address cannot change. An empty tags array removes all tags. Sending any crawl setting replaces all seven crawl settings; headers and cookies are each replaced only when sent. Targets imported from a cloud provider keep its label and tags. Targets created from uploaded scan results give 400.',
      request: { params: IdParam, body: jsonBody(TargetUpdate) },
      responses: { 200: json(TargetResponse, 'The updated target.'), ...BODY_ERRORS },
    });
  }
  registry.registerPath({
    method: 'delete',
    path: '/v1/targets/{id}',
    operationId: 'deleteTarget',
    tags: ['Targets'],
    summary: 'Delete a target',
    description:
      'Also deletes the risks of the target and removes it from scheduled scans that select it by id; scans that already ran are kept. Only MANUAL and INTERNAL_SCANNER targets can be deleted; others give 400.',
    request: { params: IdParam },
    responses: { 200: json(Deleted, 'The target was deleted.'), ...STANDARD_ERRORS },
  });
}
