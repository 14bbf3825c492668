import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { SCHEDULE_DESCRIPTION, ScheduledScan, ScheduledScanCreate, ScheduledScanUpdate } from '../schemas/scheduled-scans.js';
import { BODY_ERRORS, Deleted, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';

const ScheduledScanResponse = dataEnvelope(ScheduledScan).meta({ id: 'ScheduledScanResponse' });
const TAGS = ['Scheduled scans'];

export function registerScheduledScanPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/scans/scheduled',
    operationId: 'createScheduledScan',
    tags: TAGS,
    summary: 'Create a scheduled scan',
    description: `Creates Scans automatically, once or repeatedly. ${SCHEDULE_DESCRIPTION} NESSUS needs the account option and OWASP_ZAP_ACTIVE a paid plan; otherwise 400.`,
    request: { body: jsonBody(ScheduledScanCreate) },
    responses: { 200: json(ScheduledScanResponse, 'The created scheduled scan.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/scans/scheduled',
    operationId: 'listScheduledScans',
    tags: TAGS,
    summary: 'List scheduled scans',
    request: { query: ListQuery.meta({ description: 'No filter keys.' }) },
    responses: { 200: json(listEnvelope(ScheduledScan).meta({ id: 'ScheduledScanList' }), 'A page of scheduled scans, newest first.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/scans/scheduled/{id}',
    operationId: 'getScheduledScan',
    tags: TAGS,
    summary: 'Get a scheduled scan',
    request: { params: IdParam },
    responses: { 200: json(ScheduledScanResponse, 'The scheduled scan.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'put',
    path: '/v1/scans/scheduled/{id}',
    operationId: 'updateScheduledScan',
    tags: TAGS,
    summary: 'Update a scheduled scan',
    description:
      'The body replaces the configuration: schedule, filter_set and email_notification are required; omitted scan_types, email_to, disabled and start_time keep their values; an omitted name clears the name. next_run is recalculated on every update.',
    request: { params: IdParam, body: jsonBody(ScheduledScanUpdate) },
    responses: { 200: json(ScheduledScanResponse, 'The updated scheduled scan.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/scans/scheduled/{id}',
    operationId: 'deleteScheduledScan',
    tags: TAGS,
    summary: 'Delete a scheduled scan',
    description: 'Scans it already created are kept.',
    request: { params: IdParam },
    responses: { 200: json(Deleted, 'The scheduled scan was deleted.'), ...STANDARD_ERRORS },
  });
}
