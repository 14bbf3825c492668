/**
 * The one place errors become HTTP responses: typed errors map to their
 * status, anything else is a 500 whose details stay in the log.
 */
import type { NextFunction, Request, Response } from 'express';
import { VigilError, type ErrorKind } from '../domain/errors.js';
import type { RequestContext } from './request-context.js';
import { hasUnreadBody, sendRefusalAndLinger } from './refused-body.js';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  unavailable: 503,
};

/** An error with an explicit status that no domain rule produces (405, 413, 415). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  message?: string;
}

function fromBodyParser(error: BodyParserError): HttpError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new HttpError(400, 'The request body is not valid JSON; send a JSON object with Content-Type: application/json.');
    case 'entity.too.large':
      return new HttpError(413, 'The request body is too large; JSON bodies may be at most 1 MiB.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpError(415, 'The request body must be UTF-8 encoded JSON.');
    default:
      // Any other client error that express or body-parser raise (a URIError in a path parameter, a truncated body) is still the client's.
      if (error.expose === true && typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
        return new HttpError(error.status, `The request could not be read: ${String(error.message ?? 'malformed request').slice(0, 200)}`);
      }
      return undefined;
  }
}

export function errorMiddleware(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const context = res.locals as RequestContext;
  const ref = context.requestId;
  if (error instanceof VigilError) {
    if (error.kind === 'rate_limited' && 'retryAfterSeconds' in error) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    refuse(req, res, STATUS[error.kind], { error: error.message, ref });
    return;
  }
  const http = error instanceof HttpError ? error : fromBodyParser((error ?? {}) as BodyParserError);
  if (http !== undefined) {
    for (const [name, value] of Object.entries(http.headers)) res.setHeader(name, value);
    refuse(req, res, http.status, { error: http.message, ref });
    return;
  }
  context.log?.error({ err: error, method: req.method, path: req.path }, 'request failed');
  if (res.headersSent) return;
  refuse(req, res, 500, { error: 'Internal server error; quote ref when reporting it.', ref });
}

/** A refusal sent while the client is still sending its body lingers until the body is read (refused-body.ts). */
function refuse(req: Request, res: Response, status: number, body: { error: string; ref: string }): void {
  if (!hasUnreadBody(req)) {
    res.status(status).json(body);
    return;
  }
  const log = (res.locals as RequestContext).log;
  sendRefusalAndLinger(req, res, status, body).then(
    (outcome) => log?.info({ outcome, status }, 'refused request body discarded'),
    (error: unknown) => log?.warn({ err: error, status }, 'refused request body could not be discarded'),
  );
}
