/** Scans: the filtered list, a scan's page, stop and delete, and its result files as downloads. */
import type { Request, Response, Router } from 'express';
import type { ScansService } from '../../../app/scans-service.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { SCAN_TYPES } from '../../../domain/risks/finding.js';
import { SCAN_STATES } from '../../../domain/scans/scan.js';
import { sendResultFile } from '../../result-download.js';
import { named, queryText, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import type { Notice } from '../views/components.js';
import { scanPage, scansPage, type ScanFilterForm } from '../views/scans.js';

const SCANS_PER_PAGE = 25;

function filterForm(req: Request): ScanFilterForm {
  const oneOf = (name: string, allowed: readonly string[]) => (allowed.includes(queryText(req, name)) ? queryText(req, name) : '');
  return { state: oneOf('state', SCAN_STATES), type: oneOf('type', SCAN_TYPES), scheduled_by: queryText(req, 'scheduled_by').trim().slice(0, 64) };
}

/** The API's list filters (SPEC.md filters JSON), so that the list is the one GET /v1/scans gives. */
function apiFilters(form: ScanFilterForm): string {
  const only = (key: keyof ScanFilterForm) => (form[key] === '' ? {} : { [key]: [form[key]] });
  return JSON.stringify({ ...only('state'), ...only('type'), ...only('scheduled_by') });
}

function renderScan(res: Response, scans: ScansService, id: string, status: number, notice: Notice | undefined): void {
  const session = sessionOf(res);
  const scan = scans.get(session.account, id);
  res
    .status(status)
    .type('html')
    .send(scanPage({ session, scan, files: scans.resultFilesOf(session.account, scan), notice }));
}

/** Stop and delete: the service's refusal ("only ... can be deleted") is shown on the scan's page. */
async function change(res: Response, scans: ScansService, id: string, act: () => string | Promise<string>): Promise<void> {
  try {
    res.redirect(303, await act());
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    renderScan(res, scans, id, 400, { kind: 'error', text: asSentence(error.message) });
  }
}

export function scanRoutes(router: Router, scans: ScansService): void {
  router.get('/scans', named('dashboard.scans'), (req, res) => {
    const session = sessionOf(res);
    const filters = filterForm(req);
    const pageToken = queryText(req, 'page_token');
    const page = scans.list(session.account, { filters: apiFilters(filters), page_size: SCANS_PER_PAGE, page_token: pageToken === '' ? undefined : pageToken });
    res
      .type('html')
      .send(scansPage({ session, filters, scans: page.items, nextPageToken: page.nextPageToken, onLaterPage: pageToken !== '', notice: noticeFrom(req) }));
  });

  router.get('/scans/:id', named('dashboard.scan'), (req, res) => renderScan(res, scans, String(req.params.id), 200, noticeFrom(req)));

  router.post('/scans/:id/stop', named('dashboard.stopScan'), async (req, res) => {
    const id = String(req.params.id);
    await change(res, scans, id, () => {
      scans.stop(sessionOf(res).account, id);
      return withNotice(PATHS.scan(id), 'scan-stopping');
    });
  });

  router.post('/scans/:id/delete', named('dashboard.deleteScan'), async (req, res) => {
    const id = String(req.params.id);
    await change(res, scans, id, async () => {
      await scans.delete(sessionOf(res).account, id);
      return withNotice(PATHS.scans, 'scan-deleted');
    });
  });

  // The same file, headers and account scoping as GET /v1/results/{id}, with the session instead of an API key.
  router.get('/results/:id', named('dashboard.result'), async (req, res) => {
    sendResultFile(res, await scans.openResult(sessionOf(res).account, String(req.params.id)));
  });
}
