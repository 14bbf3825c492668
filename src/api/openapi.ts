/**
 * Builds the OpenAPI 3.0.3 document from the zod schemas: the one source of
 * truth that openapi-backend validates requests with and /v1/openapi.json
 * serves (DESIGN.md 10). A test keeps the committed copy in step.
 */
import { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { registerImportPaths } from './paths/imports.js';
import { registerReportPaths } from './paths/reports.js';
import { registerRiskPaths } from './paths/risks.js';
import { registerScanPaths } from './paths/scans.js';
import { registerScheduledScanPaths } from './paths/scheduled-scans.js';
import { registerSourcePaths } from './paths/sources.js';
import { registerTargetPaths } from './paths/targets.js';

export const API_KEY_HEADER = 'X-SERVICE-API-KEY';
export const API_VERSION = '1.0.0';

/** The groups of operations, in the order the reference at /docs shows them. */
const API_TAGS = [
  { name: 'Meta', description: 'This document.' },
  { name: 'Targets', description: 'Hosts, addresses and URLs to scan, with their tags, scanner settings, login recordings and API definitions.' },
  { name: 'Scans', description: 'Scans of targets by one scanner type, their state, progress, risks found and result files.' },
  { name: 'Scheduled scans', description: 'Scans started on a schedule (cron), with their runs.' },
  { name: 'Risks', description: 'Findings tracked across scans: open, closed, accepted.' },
  { name: 'Reports', description: 'PDF, HTML and CSV reports of a selection of targets and risks.' },
  { name: 'Imported results', description: 'Scanner output produced elsewhere, uploaded and recorded as scans of its own.' },
];

export type OpenApiDocument = ReturnType<OpenApiGeneratorV3['generateDocument']>;

function registerMetaPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['Meta'],
    summary: 'This OpenAPI document',
    description: 'Public: no API key needed.',
    security: [],
    responses: { 200: { description: 'The OpenAPI 3.0.3 document.', content: { 'application/json': { schema: z.object({ openapi: z.string() }) } } } },
  });
}

export function buildOpenApiDocument(): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKeyAuth', { type: 'apiKey', in: 'header', name: API_KEY_HEADER });
  registerMetaPaths(registry);
  registerTargetPaths(registry);
  registerScanPaths(registry);
  registerScheduledScanPaths(registry);
  registerRiskPaths(registry);
  registerReportPaths(registry);
  registerSourcePaths(registry);
  registerImportPaths(registry);
  return new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'Vigil vulnerability scanning API',
      version: API_VERSION,
      description:
        'REST API of Vigil. Every request carries X-SERVICE-API-KEY. Single objects come as { data }, lists as { data, next_page_token? }, errors as { error, ref }. Lists are newest first; page_size 1..499 (anything else means the default and maximum, 500).',
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    tags: API_TAGS,
    servers: [{ url: '/' }],
    security: [{ ApiKeyAuth: [] }],
  });
}
