import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { REPORT_LIMITS } from '../../domain/reports/snapshot.js';
import { ErrorBody, ListQuery, listEnvelope } from '../schemas/common.js';
import { ReportCreate, ReportCreated, ReportDownloadQuery, ReportListItem } from '../schemas/reports.js';
import { BODY_ERRORS, Deleted, IdParam, STANDARD_ERRORS, UNAVAILABLE, json, jsonBody } from './common.js';

const FORBIDDEN = {
  403: { description: 'CSV asked for without CSV export enabled on the account (feature csv_export).', content: { 'application/json': { schema: ErrorBody } } },
};
const File = z.string().meta({ format: 'binary' });

export function registerReportPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/reports',
    operationId: 'createReport',
    tags: ['Reports'],
    summary: 'Create a report',
    description: [
      'Takes a snapshot of the selected risks and renders it before answering, so the request can take seconds (a 10,000-risk PDF takes a few); reports are made one at a time in a worker thread, so it may also wait for another, and 503 says that too many are waiting or that its worker stopped.',
      "A report holds what GET /v1/risks would list with the same risks_filter (closed and accepted risks included; OpenVAS risks below the account's minimum QoD left out), limited to the targets targets_filter selects, and lists every selected target's health score and grade.",
      `At most ${REPORT_LIMITS.maxRisks} risks: when more match, the report keeps the most severe and says on its cover how many matched. More than ${REPORT_LIMITS.maxTargets} selected targets give 400.`,
      'The filters used are shown on the report. Every later download, in any format, shows the same snapshot.',
    ].join(' '),
    request: { body: jsonBody(ReportCreate) },
    responses: { 200: json(ReportCreated, 'The report is ready; download it with GET /v1/reports/{id}.'), ...BODY_ERRORS, ...FORBIDDEN, ...UNAVAILABLE },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/reports/{id}',
    operationId: 'getReport',
    tags: ['Reports'],
    summary: 'Download a report',
    description: 'The file, with Content-Type and Content-Disposition: attachment; filename="…". Another account\'s report id gives 404.',
    request: { params: IdParam, query: ReportDownloadQuery },
    responses: {
      200: {
        description: 'The report file.',
        headers: { 'Content-Disposition': { description: 'attachment; filename="<name>.<pdf|html|csv>"', schema: { type: 'string' } } },
        content: { 'application/pdf': { schema: File }, 'text/html': { schema: File }, 'text/csv': { schema: File } },
      },
      ...STANDARD_ERRORS,
      ...FORBIDDEN,
      ...UNAVAILABLE,
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/reports',
    operationId: 'listReports',
    tags: ['Reports'],
    summary: 'List reports',
    description:
      "The account's reports, newest first, with the common list behaviour (page_token, page_size). Each item describes a report; GET /v1/reports/{id} downloads it.",
    request: { query: ListQuery.meta({ description: 'filters keys: format (PDF, HTML, CSV: the format a report was created in).' }) },
    responses: { 200: json(listEnvelope(ReportListItem).meta({ id: 'ReportList' }), 'A page of reports.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/reports/{id}',
    operationId: 'deleteReport',
    tags: ['Reports'],
    summary: 'Delete a report',
    description:
      "Removes the report and its files (every rendered format and its snapshot); later downloads give 404. A download already under way finishes. Another account's report id gives 404.",
    request: { params: IdParam },
    responses: { 200: json(Deleted, 'The report was deleted.'), ...STANDARD_ERRORS },
  });
}
