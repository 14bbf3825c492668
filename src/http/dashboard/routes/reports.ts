/** Reports: create one with the API's filters, list the latest, download any of them in any format the account may use. */
import type { Request, Response, Router } from 'express';
import { pipeline } from 'node:stream/promises';
import type { ReportsService } from '../../../app/reports-service.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { formField, named, queryText, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { EMPTY_REPORT_FORM, reportsPage, type ReportForm } from '../views/reports.js';

const LATEST_REPORTS = 50;

/** Every value of a repeated form field (ticked checkboxes). */
function formValues(req: Request, name: string): string[] {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function formOf(req: Request): ReportForm {
  return {
    report_format: formField(req, 'report_format') ?? '',
    target_ids: formField(req, 'target_ids') ?? '',
    tags: formField(req, 'tags') ?? '',
    label: formField(req, 'label') ?? '',
    titles: formField(req, 'titles') ?? '',
    status: formField(req, 'status') ?? '',
    threat_levels: formValues(req, 'threat_level'),
    scan_types: formValues(req, 'scan_type'),
  };
}

/** One value per line, blank lines dropped; a field left empty sends no key, so it does not filter. */
function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

function compact(filter: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(filter).filter(([, values]) => values.length > 0));
}

function requestOf(form: ReportForm) {
  return {
    report_format: form.report_format,
    targets_filter: compact({ target_ids: lines(form.target_ids), tags: lines(form.tags), label: lines(form.label) }),
    risks_filter: compact({
      status: form.status === '' ? [] : [form.status],
      'risk_definition.threat_level': form.threat_levels,
      'risk_definition.scan_type': form.scan_types,
      'risk_definition.title': lines(form.titles),
    }),
  };
}

function showPage(res: Response, reports: ReportsService, form: ReportForm, notice: ReturnType<typeof noticeFrom>, status = 200): void {
  const session = sessionOf(res);
  const view = { session, form, formats: reports.formatsFor(session.account), reports: reports.recent(session.account, LATEST_REPORTS), notice };
  res.status(status).type('html').send(reportsPage(view));
}

export function reportRoutes(router: Router, reports: ReportsService): void {
  router.get('/reports', named('dashboard.reports'), (req, res) => showPage(res, reports, EMPTY_REPORT_FORM, noticeFrom(req)));

  router.post('/reports', named('dashboard.createReport'), async (req, res) => {
    const form = formOf(req);
    try {
      await reports.create(sessionOf(res).account, requestOf(form));
      res.redirect(303, withNotice(PATHS.reports, 'report-created'));
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      showPage(res, reports, form, { kind: 'error', text: asSentence(error.message) }, 400);
    }
  });

  router.get('/reports/:id/download', named('dashboard.downloadReport'), async (req, res) => {
    const file = await reports.download(sessionOf(res).account, String(req.params.id), { format: queryText(req, 'format') || undefined });
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', `attachment; filename="${file.fileName}"`);
    // A download the browser gives up on is no error of the page's.
    await pipeline(file.content, res).catch(() => res.destroy());
  });
}
