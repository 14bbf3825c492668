import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { Scan, StartScan } from '../schemas/scans.js';
import { BODY_ERRORS, Deleted, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';

const ScanResponse = dataEnvelope(Scan).meta({ id: 'ScanResponse' });

export function registerScanPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/scans',
    operationId: 'startScan',
    tags: ['Scans'],
    summary: 'Start a scan',
    description:
      "Creates one Scan per chunk of the type's target limit (1 for the ZAP types, 10 for SSLYZE and NUCLEI, 100 for the others) and answers with the first; List Scans shows all. Over the monthly scan limit the Scan is created in OVER_LIMIT and never runs. NESSUS needs the account option, OWASP_ZAP_ACTIVE a paid plan, and use_authentication: true a ZAP type; otherwise 400.",
    request: { body: jsonBody(StartScan) },
    responses: { 200: json(ScanResponse, 'The first Scan created.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/scans',
    operationId: 'listScans',
    tags: ['Scans'],
    summary: 'List scans',
    request: { query: ListQuery.meta({ description: 'filters keys: state, type, scheduled_by.' }) },
    responses: { 200: json(listEnvelope(Scan).meta({ id: 'ScanList' }), 'A page of scans, newest first.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/scans/{id}',
    operationId: 'getScan',
    tags: ['Scans'],
    summary: 'Get a scan',
    request: { params: IdParam },
    responses: { 200: json(ScanResponse, 'The scan.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/scans/{id}',
    operationId: 'deleteScan',
    tags: ['Scans'],
    summary: 'Delete a scan',
    description: 'Only in a terminal state (SUCCEEDED, STOPPED, FAILED, OVER_LIMIT); otherwise 400.',
    request: { params: IdParam },
    responses: { 200: json(Deleted, 'The scan was deleted.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/scans/{id}/stop',
    operationId: 'stopScan',
    tags: ['Scans'],
    summary: 'Stop a scan',
    description: 'QUEUED moves to STOPPED, RUNNING to STOPPING and then STOPPED once the scanner is gone; STOPPING stays as it is. A terminal scan gives 400.',
    request: { params: IdParam },
    responses: { 200: json(ScanResponse, 'The scan after the stop request.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/results/{id}',
    operationId: 'getResultFile',
    tags: ['Scans'],
    summary: 'Download a scan result file',
    description:
      "A file listed in a SUCCEEDED Scan's results, with its content type: a raw scanner output, or the Scan's PDF (application/pdf; made right after the Scan succeeded, and made first if it is downloaded before that). Another account's result id gives 404.",
    request: { params: z.object({ id: z.string().meta({ description: "result_id from a Scan's results." }) }) },
    responses: {
      200: {
        description: "The file as the scanner wrote it, or the Scan's PDF.",
        content: {
          'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) },
          'application/pdf': { schema: z.string().meta({ format: 'binary' }) },
        },
      },
      ...STANDARD_ERRORS,
    },
  });
}
