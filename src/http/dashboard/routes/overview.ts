/** The overview, the dashboard's first page. */
import type { Router } from 'express';
import type { DashboardService } from '../../../app/dashboard-service.js';
import { named, sessionOf } from '../context.js';
import { noticeFrom } from '../notices.js';
import { overviewPage } from '../views/overview.js';

export function overviewRoutes(router: Router, dashboard: DashboardService): void {
  router.get('/', named('dashboard.overview'), (req, res) => {
    const session = sessionOf(res);
    res.type('html').send(overviewPage({ session, overview: dashboard.overview(session.account), notice: noticeFrom(req) }));
  });
}
