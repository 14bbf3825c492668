import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { Source, SourceCreate } from '../schemas/sources.js';
import { BODY_ERRORS, STANDARD_ERRORS, json, jsonBody } from './common.js';

export function registerSourcePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/sources',
    operationId: 'createSource',
    tags: ['Imported results'],
    summary: 'Create a source',
    description: 'An IMPORTED source collects scanner results uploaded with POST /v1/results; its id is their source_id.',
    request: { body: jsonBody(SourceCreate) },
    responses: { 200: json(dataEnvelope(Source).meta({ id: 'SourceResponse' }), 'The created source.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/sources',
    operationId: 'listSources',
    tags: ['Imported results'],
    summary: 'List sources',
    request: { query: ListQuery.meta({ description: 'filters keys: source_type, name (exact).' }) },
    responses: { 200: json(listEnvelope(Source).meta({ id: 'SourceList' }), 'A page of sources, newest first.'), ...STANDARD_ERRORS },
  });
}
