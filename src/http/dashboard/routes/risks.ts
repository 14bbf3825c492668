/** Risks: the filtered, paginated list, a risk's page, accepting with a note and un-accepting. */
import type { Request, Response, Router } from 'express';
import type { DashboardService } from '../../../app/dashboard-service.js';
import { parseRiskSort, type RiskSearch, type RisksService } from '../../../app/risks-service.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { THREAT_LEVELS } from '../../../domain/risks/finding.js';
import { formField, named, queryText, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { RISK_TABLE_SORTS, riskPage, risksPage, type RiskFilterForm, type RiskPageView } from '../views/risks.js';

const RISKS_PER_PAGE = 25;
const SCANS_ON_RISK_PAGE = 10;

/** The risk table order the query asks for under `name`, when it is one the tables offer; '' (newest first) otherwise. */
export function riskTableSort(req: Request, name: string): string {
  const value = queryText(req, name);
  return (RISK_TABLE_SORTS as readonly string[]).includes(value) ? value : '';
}

/** The form's values, each kept only when it is one the form offers. */
function filterForm(req: Request): RiskFilterForm {
  const oneOf = (name: string, allowed: readonly string[]) => (allowed.includes(queryText(req, name)) ? queryText(req, name) : '');
  return {
    sort: riskTableSort(req, 'sort'),
    threat_level: oneOf('threat_level', THREAT_LEVELS),
    status: oneOf('status', ['OPEN', 'CLOSED']),
    accepted: oneOf('accepted', ['yes', 'no']),
    target: queryText(req, 'target').trim().slice(0, 2048),
    target_id: queryText(req, 'target_id').trim().slice(0, 64),
  };
}

function searchOf(form: RiskFilterForm, pageToken: string): RiskSearch {
  return {
    filters: {
      ...(form.threat_level === '' ? {} : { 'risk_definition.threat_level': [form.threat_level] }),
      ...(form.status === '' ? {} : { status: [form.status] }),
      ...(form.target_id === '' ? {} : { target_id: [form.target_id] }),
    },
    sort: parseRiskSort(form.sort),
    accepted: form.accepted === '' ? undefined : form.accepted === 'yes',
    targetContains: form.target === '' ? undefined : form.target,
    pageSize: RISKS_PER_PAGE,
    pageToken: pageToken === '' ? undefined : pageToken,
  };
}

/** A risk's page: the risk with the scans that detected it. */
function renderRisk(
  res: Response,
  risks: RisksService,
  dashboard: DashboardService,
  id: string,
  status: number,
  extra: Pick<RiskPageView, 'notice' | 'noteError'>,
): void {
  const session = sessionOf(res);
  const risk = risks.get(session.account, id);
  const scans = dashboard.scansDetecting(session.account, risk.id, SCANS_ON_RISK_PAGE);
  res
    .status(status)
    .type('html')
    .send(riskPage({ session, risk, scans, ...extra }));
}

export function riskRoutes(router: Router, risks: RisksService, dashboard: DashboardService): void {
  router.get('/risks', named('dashboard.risks'), (req, res) => {
    const session = sessionOf(res);
    const filters = filterForm(req);
    const pageToken = queryText(req, 'page_token');
    const page = risks.search(session.account, searchOf(filters, pageToken), (risk) => risk);
    res
      .type('html')
      .send(risksPage({ session, filters, risks: page.items, nextPageToken: page.nextPageToken, onLaterPage: pageToken !== '', notice: noticeFrom(req) }));
  });

  router.get('/risks/:id', named('dashboard.risk'), (req, res) => {
    renderRisk(res, risks, dashboard, String(req.params.id), 200, { notice: noticeFrom(req) });
  });

  router.post('/risks/:id/accept', named('dashboard.acceptRisk'), (req, res) => {
    const session = sessionOf(res);
    const id = String(req.params.id);
    const note = formField(req, 'note') ?? '';
    try {
      risks.accept(session.account, id, note);
      res.redirect(303, withNotice(PATHS.risk(id), 'risk-accepted'));
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      renderRisk(res, risks, dashboard, id, 400, { noteError: { note, error: asSentence(error.message) } });
    }
  });

  router.post('/risks/:id/unaccept', named('dashboard.unacceptRisk'), (req, res) => {
    const id = String(req.params.id);
    risks.unaccept(sessionOf(res).account, id);
    res.redirect(303, withNotice(PATHS.risk(id), 'risk-unaccepted'));
  });
}
