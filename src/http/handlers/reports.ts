import { pipeline } from 'node:stream/promises';
import { ReportCreate } from '../../api/schemas/reports.js';
import type { ReportsService } from '../../app/reports-service.js';
import type { SavedReportsService } from '../../app/saved-reports-service.js';
import { presentReport } from '../../app/present/report.js';
import type { Operation } from '../api-router.js';
import { listQuery, parseBody } from './input.js';

export function reportOperations(reports: ReportsService, saved: SavedReportsService): Record<string, Operation> {
  return {
    listReports: async ({ principal, query }) => {
      const page = await saved.list(principal.account, listQuery(query), presentReport);
      return { data: page.items, ...(page.nextPageToken === undefined ? {} : { next_page_token: page.nextPageToken }) };
    },
    deleteReport: async ({ principal, params }) => {
      await saved.delete(principal.account, params.id!);
      return { data: { id: params.id!, deleted: true } };
    },
    createReport: async ({ principal, body }) => {
      const { report_format } = parseBody(ReportCreate.pick({ report_format: true }), body);
      // The filters go to the service as sent: it names the allowed keys when one is unknown.
      const sent = body as { targets_filter?: unknown; risks_filter?: unknown };
      const id = await reports.create(principal.account, { report_format, targets_filter: sent.targets_filter, risks_filter: sent.risks_filter });
      return { data: { id } };
    },
    getReport: async ({ principal, params, query, res }) => {
      const file = await reports.download(principal.account, params.id!, { format: query.format, filename: query.filename });
      res.status(200);
      res.setHeader('Content-Type', file.contentType);
      res.setHeader('Content-Length', String(file.size));
      res.setHeader('Content-Disposition', `attachment; filename="${file.fileName}"`);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      // Should a browser show the HTML report from this address after all, it runs nothing and loads nothing.
      res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox");
      void pipeline(file.content, res).catch(() => res.destroy());
      return undefined;
    },
  };
}
