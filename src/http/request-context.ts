/**
 * Per-request context: a request id Vigil generates (also the `ref` of error
 * bodies; a client's X-Request-Id is only logged beside it), a child
 * logger carrying it, and metrics for the request when it finishes.
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../app/accounts-service.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

export interface RequestContext {
  requestId: string;
  log: Logger;
  /** The matched operation id, or a fixed word, so metrics labels stay bounded. */
  route: string;
  principal?: Principal;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestContext(logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    // Vigil's own id is the ref: a client could otherwise make two requests share one, or pick one that points at another's log lines.
    const requestId = randomUUID();
    const incoming = req.get('x-request-id');
    const context = res.locals as RequestContext;
    context.requestId = requestId;
    context.log = logger.child(
      incoming !== undefined && SAFE_REQUEST_ID.test(incoming) ? { req_id: requestId, client_req_id: incoming } : { req_id: requestId },
    );
    context.route = 'unmatched';
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ method: req.method, route: context.route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method: req.method, route: context.route }, seconds);
      const fields = {
        method: req.method,
        route: context.route,
        status: res.statusCode,
        duration_ms: Math.round(seconds * 1e4) / 10,
        account_id: context.principal?.account.id,
      };
      if (res.statusCode >= 500) context.log.error(fields, 'request completed');
      else context.log.info(fields, 'request completed');
    });
    next();
  };
}
