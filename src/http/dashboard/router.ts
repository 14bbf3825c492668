/**
 * The account dashboard at /dashboard: server-rendered pages, no scripts.
 * Every response carries strict security headers; every POST must come from
 * the service's own origin, and once signed in carry the session's CSRF
 * token. It calls application services only, like the /v1 edge.
 */
import express, { type Router } from 'express';
import type { AccountsService } from '../../app/accounts-service.js';
import type { DashboardSessionsService } from '../../app/dashboard-sessions.js';
import type { DashboardService } from '../../app/dashboard-service.js';
import type { RisksService } from '../../app/risks-service.js';
import type { ReportsService } from '../../app/reports-service.js';
import type { ScansService } from '../../app/scans-service.js';
import type { ScheduledScansService } from '../../app/scheduled-scans-service.js';
import type { TargetsService } from '../../app/targets-service.js';
import type { WebhookEndpointsService } from '../../app/webhook-endpoints-service.js';
import type { RateLimiter } from '../rate-limiter.js';
import { ASSETS } from './assets/index.js';
import { named } from './context.js';
import { dashboardErrors, notFoundPage } from './errors.js';
import { PATHS } from './paths.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { reportRoutes } from './routes/reports.js';
import { overviewRoutes } from './routes/overview.js';
import { riskRoutes } from './routes/risks.js';
import { scanRoutes } from './routes/scans.js';
import { scheduledScanRoutes } from './routes/scheduled-scans.js';
import { targetRoutes } from './routes/targets.js';
import { signInRoutes, signOutRoute } from './routes/sign-in.js';
import { webhookRoutes } from './routes/webhooks.js';
import { requireCsrfToken, sameOriginPosts, securityHeaders } from './security.js';
import { loadSession, requireSession } from './session.js';

export interface DashboardDeps {
  sessions: DashboardSessionsService;
  accounts: AccountsService;
  webhookEndpoints: WebhookEndpointsService;
  risks: RisksService;
  reports: ReportsService;
  targets: TargetsService;
  scans: ScansService;
  scheduledScans: ScheduledScansService;
  /** The overview and the links between targets, scans and risks. */
  dashboard: DashboardService;
  /** VIGIL_PUBLIC_URL: the service's own origin, and https means Secure cookies. */
  publicUrl: string;
  /** Failed sign-ins per client address. */
  signInLimiter: RateLimiter;
}

const FORM_BODY_LIMIT = '64kb';
/** The scheduled-scan form is the largest: 11 fields plus one per scan type ticked. */
const FORM_FIELD_LIMIT = 32;

function serveAssets(router: Router): void {
  for (const asset of Object.values(ASSETS)) {
    router.get(asset.path.replace(PATHS.home, ''), named('dashboard.asset'), (_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.type(asset.contentType).send(asset.body);
    });
  }
}

export function createDashboardRouter(deps: DashboardDeps): Router {
  const secureCookies = new URL(deps.publicUrl).protocol === 'https:';
  const router = express.Router();
  router.use(named('dashboard'), securityHeaders);
  serveAssets(router);
  router.use(express.urlencoded({ extended: false, limit: FORM_BODY_LIMIT, parameterLimit: FORM_FIELD_LIMIT }));
  router.use(sameOriginPosts(deps.publicUrl), loadSession(deps.sessions));
  signInRoutes(router, { sessions: deps.sessions, signInLimiter: deps.signInLimiter, secureCookies });

  router.use(requireSession, requireCsrfToken);
  overviewRoutes(router, deps.dashboard);
  signOutRoute(router, { sessions: deps.sessions, secureCookies });
  apiKeyRoutes(router, { accounts: deps.accounts, sessions: deps.sessions, secureCookies });
  webhookRoutes(router, deps.webhookEndpoints);
  targetRoutes(router, { targets: deps.targets, scans: deps.scans, risks: deps.risks, dashboard: deps.dashboard });
  scanRoutes(router, deps.scans);
  scheduledScanRoutes(router, deps.scheduledScans);
  riskRoutes(router, deps.risks, deps.dashboard);
  reportRoutes(router, deps.reports);
  router.use(notFoundPage);
  router.use(dashboardErrors);
  return router;
}
