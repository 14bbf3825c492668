/**
 * The probes. /healthz (CONTRACT.md): 200 while the service accepts
 * requests. /livez: the process and its event loop answer, nothing else, so
 * a slow database never gets the pod killed. /readyz: every readiness check
 * passes (migrations applied, the store writable, and on Kubernetes the
 * informers synced), else 503 naming the checks that fail.
 */
import { Router } from 'express';
import type { RequestContext } from './request-context.js';
import type { ReadinessCheck } from '../app/ports/health.js';

export interface HealthDeps {
  /** False while shutting down, so load balancers stop sending traffic. */
  isAccepting: () => boolean;
  /** The checks /readyz runs; none means ready whenever accepting. */
  readiness?: () => Promise<ReadinessCheck[]>;
}

export function healthRouter(deps: HealthDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    (res.locals as RequestContext).route = 'healthz';
    if (deps.isAccepting()) res.json({ status: 'ok' });
    else res.status(503).json({ status: 'shutting down' });
  });
  router.get('/livez', (_req, res) => {
    (res.locals as RequestContext).route = 'livez';
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    (res.locals as RequestContext).route = 'readyz';
    const checks = [
      { name: 'accepting', ok: deps.isAccepting(), ...(deps.isAccepting() ? {} : { message: 'the service is shutting down' }) },
      ...((await deps.readiness?.()) ?? []),
    ];
    const ready = checks.every((check) => check.ok);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  return router;
}
