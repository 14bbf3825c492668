/** Targets: the list, a target's page, and its actions (edit, scan, delete) through the same services and schemas as /v1. */
import type { Request, Response, Router } from 'express';
import type { DashboardService } from '../../../app/dashboard-service.js';
import { parseRiskSort, type RisksService } from '../../../app/risks-service.js';
import type { ScansService } from '../../../app/scans-service.js';
import type { TargetsService } from '../../../app/targets-service.js';
import { StartScan } from '../../../api/schemas/scans.js';
import { TargetUpdate } from '../../../api/schemas/targets.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { parseBody } from '../../handlers/input.js';
import { formField, listOf, named, queryText, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { riskTableSort } from './risks.js';
import { targetPage, targetsPage, type TargetFilterForm, type TargetPageView } from '../views/targets.js';

const TARGETS_PER_PAGE = 25;
const RISKS_ON_TARGET_PAGE = 25;
const SCANS_ON_TARGET_PAGE = 10;

export interface TargetRouteDeps {
  targets: TargetsService;
  scans: ScansService;
  risks: RisksService;
  dashboard: DashboardService;
}

/** The form's values as sent; the list splits nothing, so one tag and one piece of text. */
function filterForm(req: Request): TargetFilterForm {
  return { tag: queryText(req, 'tag').trim().toLowerCase().slice(0, 255), q: queryText(req, 'q').trim().slice(0, 2048) };
}

function listTargets(req: Request, res: Response, deps: TargetRouteDeps): void {
  const session = sessionOf(res);
  const filters = filterForm(req);
  const pageToken = queryText(req, 'page_token');
  const search = {
    tags: filters.tag === '' ? [] : [filters.tag],
    text: filters.q,
    pageSize: TARGETS_PER_PAGE,
    pageToken: pageToken === '' ? undefined : pageToken,
  };
  const page = deps.targets.search(session.account, search, (row) => ({ row, tags: JSON.parse(row.tagsJson) as string[] }));
  const openRisks = deps.dashboard.openRisksOfTargets(
    session.account,
    page.items.map((item) => item.row.id),
  );
  res.type('html').send(
    targetsPage({
      session,
      filters,
      targets: page.items,
      openRisks,
      nextPageToken: page.nextPageToken,
      onLaterPage: pageToken !== '',
      notice: noticeFrom(req),
    }),
  );
}

type Feedback = Pick<TargetPageView, 'edit' | 'scanError' | 'deleteError' | 'notice' | 'riskSort'>;

function renderTarget(res: Response, deps: TargetRouteDeps, id: string, status: number, feedback: Feedback): void {
  const session = sessionOf(res);
  const target = deps.targets.get(session.account, id);
  const riskSort = feedback.riskSort ?? '';
  const risks = deps.risks.search(
    session.account,
    { filters: { target_id: [target.id] }, sort: parseRiskSort(riskSort), pageSize: RISKS_ON_TARGET_PAGE },
    (risk) => risk,
  );
  res
    .status(status)
    .type('html')
    .send(
      targetPage({
        session,
        target,
        openRisks: deps.dashboard.openRisksOfTargets(session.account, [target.id]).get(target.id),
        risks: risks.items,
        moreRisks: risks.nextPageToken !== undefined,
        scans: deps.dashboard.scansOfTarget(session.account, target.id, SCANS_ON_TARGET_PAGE),
        ...feedback,
      }),
    );
}

/** Runs a change; the service's refusal re-renders the target's page with the sentence where the form is. */
function refusable(res: Response, deps: TargetRouteDeps, id: string, change: () => void, refused: (message: string) => Feedback): void {
  try {
    change();
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    renderTarget(res, deps, id, 400, refused(asSentence(error.message)));
  }
}

export function targetRoutes(router: Router, deps: TargetRouteDeps): void {
  router.get('/targets', named('dashboard.targets'), (req, res) => listTargets(req, res, deps));

  router.get('/targets/:id', named('dashboard.target'), (req, res) => {
    renderTarget(res, deps, String(req.params.id), 200, { notice: noticeFrom(req), riskSort: riskTableSort(req, 'risk_sort') });
  });

  router.post('/targets/:id/edit', named('dashboard.editTarget'), (req, res) => {
    const id = String(req.params.id);
    const label = formField(req, 'label') ?? '';
    const tags = formField(req, 'tags') ?? '';
    refusable(
      res,
      deps,
      id,
      () => {
        deps.targets.update(sessionOf(res).account, id, parseBody(TargetUpdate, { label: label.trim(), tags: listOf(tags) }));
        res.redirect(303, withNotice(PATHS.target(id), 'target-saved'));
      },
      (error) => ({ edit: { label, tags, error } }),
    );
  });

  router.post('/targets/:id/scan', named('dashboard.scanTarget'), (req, res) => {
    const id = String(req.params.id);
    const type = formField(req, 'type') ?? '';
    refusable(
      res,
      deps,
      id,
      () => {
        const account = sessionOf(res).account;
        const target = deps.targets.get(account, id);
        const [scan] = deps.scans.start(account, parseBody(StartScan, { type, target_ids: [target.id] }));
        res.redirect(303, withNotice(PATHS.scan(scan!.id), 'scan-started'));
      },
      (error) => ({ scanError: { type, error } }),
    );
  });

  router.post('/targets/:id/delete', named('dashboard.deleteTarget'), (req, res) => {
    const id = String(req.params.id);
    refusable(
      res,
      deps,
      id,
      () => {
        deps.targets.delete(sessionOf(res).account, id);
        res.redirect(303, withNotice(PATHS.targets, 'target-deleted'));
      },
      (error) => ({ deleteError: error }),
    );
  });
}
