/**
 * /metrics, on the API's port or on a port of its own (VIGIL_METRICS_PORT):
 * the chart's Service names that port `metrics`, the ServiceMonitor scrapes
 * it and the Ingress never routes it, so the figures stay inside the cluster.
 */
import express, { type Express, type RequestHandler } from 'express';
import type { Metrics } from '../observability/metrics.js';
import type { RequestContext } from './request-context.js';

export function metricsHandler(metrics: Metrics): RequestHandler {
  return async (_req, res) => {
    (res.locals as Partial<RequestContext>).route = 'metrics';
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}

/** The metrics port's app: /metrics only; every other path is a 404. */
export function createMetricsApp(metrics: Metrics): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsHandler(metrics));
  app.use((_req, res) => res.status(404).json({ error: 'only /metrics is served on this port' }));
  return app;
}
