/**
 * The HTTP edge: health, metrics, the OpenAPI document, and /v1 through
 * openapi-backend. It calls application services only, never adapters.
 */
import express, { type Express, type Request, type Response } from 'express';
import iconv from 'iconv-lite';
import type { OpenApiDocument } from '../api/openapi.js';
import type { AccountsService } from '../app/accounts-service.js';
import type { ScansService } from '../app/scans-service.js';
import type { UploadsService } from '../app/uploads-service.js';
import { internalUploadsRouter } from './internal-uploads.js';
import type { TargetsService } from '../app/targets-service.js';
import type { SourcesService } from '../app/sources-service.js';
import type { ImportsService } from '../app/imports-service.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { createApiRouter } from './api-router.js';
import { HttpError, errorMiddleware } from './errors.js';
import { scanOperations } from './handlers/scans.js';
import { riskOperations } from './handlers/risks.js';
import type { RisksService } from '../app/risks-service.js';
import type { ReportsService } from '../app/reports-service.js';
import type { SavedReportsService } from '../app/saved-reports-service.js';
import { reportOperations } from './handlers/reports.js';
import { targetOperations } from './handlers/targets.js';
import { ATTACHMENT_OPERATIONS, targetAttachmentOperations } from './handlers/target-attachments.js';
import type { TargetAttachmentsService } from '../app/target-attachments-service.js';
import { sourceOperations } from './handlers/sources.js';
import { scheduledScanOperations } from './handlers/scheduled-scans.js';
import type { ScheduledScansService } from '../app/scheduled-scans-service.js';
import { STREAMING_OPERATIONS, importOperations } from './handlers/imports.js';
import type { RateLimiter } from './rate-limiter.js';
import { requestContext, type RequestContext } from './request-context.js';
import { refuseDeepJson, refuseLoneSurrogates, refuseMalformedRequests } from './request-guards.js';
import { createDashboardRouter, type DashboardDeps } from './dashboard/router.js';
import { apiReferenceRouter } from './api-reference.js';
import { healthRouter } from './health.js';
import { metricsHandler } from './metrics-app.js';
import { requestTurns } from './request-turns.js';
import type { ReadinessCheck } from '../app/ports/health.js';

export interface HttpAppDeps {
  document: OpenApiDocument;
  accounts: AccountsService;
  targets: TargetsService;
  targetAttachments: TargetAttachmentsService;
  scans: ScansService;
  scheduledScans: ScheduledScansService;
  risks: RisksService;
  reports: ReportsService;
  savedReports: SavedReportsService;
  sources: SourcesService;
  imports: ImportsService;
  uploads: UploadsService;
  rateLimiter: RateLimiter;
  /** Failed API key checks per client address (README, Security). */
  authFailureLimiter: RateLimiter;
  logger: Logger;
  metrics: Metrics;
  /** False while shutting down, so load balancers stop sending traffic. */
  isAccepting: () => boolean;
  /** False when /metrics has a port of its own (VIGIL_METRICS_PORT, metrics-app.ts). */
  metricsOnThisPort?: boolean;
  /** The API's request validators compile after start-up rather than at each operation's first request (api-router.ts). */
  compileValidatorsInBackground?: boolean;
  /** What /readyz checks besides accepting (health.ts). */
  readiness?: () => Promise<ReadinessCheck[]>;
  /** The account dashboard at /dashboard; left out where only the API is wanted (benchmarks). */
  dashboard?: DashboardDeps;
}

const JSON_BODY_LIMIT = '1mb';

/**
 * Counts the bytes of accepted result uploads (their Content-Length) once
 * the answer is a success; the body itself is left to its handler, untouched.
 */
function countUploadBytes(metrics: Metrics, source: 'scan' | 'import') {
  return (req: Request, res: Response, next: () => void): void => {
    if (req.method === 'PUT' || req.method === 'POST') {
      res.once('finish', () => {
        const length = Number(req.headers['content-length']);
        if (res.statusCode < 300 && Number.isSafeInteger(length) && length > 0) metrics.uploadBytes.inc({ source }, length);
      });
    }
    next();
  };
}

export async function createHttpApp(deps: HttpAppDeps): Promise<Express> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(refuseMalformedRequests);

  app.use(healthRouter({ isAccepting: deps.isAccepting, ...(deps.readiness === undefined ? {} : { readiness: deps.readiness }) }));
  if (deps.metricsOnThisPort ?? true) app.get('/metrics', metricsHandler(deps.metrics));

  app.use(apiReferenceRouter());

  const documentJson = JSON.stringify(deps.document);
  const apiRouter = await createApiRouter({
    document: deps.document,
    accounts: deps.accounts,
    rateLimiter: deps.rateLimiter,
    authFailureLimiter: deps.authFailureLimiter,
    operations: {
      ...targetOperations(deps.targets),
      ...targetAttachmentOperations(deps.targetAttachments),
      ...scanOperations(deps.scans),
      ...scheduledScanOperations(deps.scheduledScans),
      ...riskOperations(deps.risks),
      ...reportOperations(deps.reports, deps.savedReports),
      ...sourceOperations(deps.sources),
      ...importOperations(deps.imports),
    },
    streamingOperations: [...STREAMING_OPERATIONS, ...ATTACHMENT_OPERATIONS],
    // Bursts land here (200 POST /v1/scans at once, bench/scans.ts; list pages): their validators are compiled before the first request, not by it.
    compiledAtStart: ['startScan', 'listTargets'],
    compileRestInBackground: deps.compileValidatorsInBackground ?? false,
    publicOperations: {
      getOpenApiDocument: (_req: Request, res: Response) => {
        (res.locals as RequestContext).route = 'getOpenApiDocument';
        res.type('application/json').send(documentJson);
      },
    },
  });
  app.use(['/v1', '/internal/v1', '/dashboard'], requestTurns());
  app.use('/internal/v1/scans', countUploadBytes(deps.metrics, 'scan'));
  app.use('/v1/results', countUploadBytes(deps.metrics, 'import'));
  app.use(internalUploadsRouter(deps.uploads, deps.authFailureLimiter));
  // body-parser decodes a JSON body through iconv-lite, which loads its table of encodings on the first
  // body it decodes: 5-20 ms that the first request (and every request of a burst queued behind it) would wait
  // (bench/scans.ts). Loaded here, at start-up, instead; the same module instance body-parser's raw-body uses.
  iconv.getDecoder('utf-8');
  app.use('/v1', express.json({ limit: JSON_BODY_LIMIT, strict: false, verify: refuseDeepJson }));
  app.use('/v1', refuseLoneSurrogates);
  app.use('/v1', apiRouter);
  if (deps.dashboard !== undefined) app.use('/dashboard', createDashboardRouter(deps.dashboard));

  app.use((req, _res, next) => next(new HttpError(404, `Nothing at ${req.method} ${req.path}.`)));
  app.use(errorMiddleware);
  return app;
}
