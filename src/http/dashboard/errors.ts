/**
 * Errors on dashboard pages become pages, never JSON and never stack traces:
 * typed errors say what happened in a sentence, anything else is a 500 whose
 * details stay in the log under the request id shown to the user.
 */
import type { NextFunction, Request, Response } from 'express';
import { VigilError, type ErrorKind } from '../../domain/errors.js';
import { HttpError } from '../errors.js';
import { localsOf } from './context.js';
import { asSentence } from './notices.js';
import { errorPage, type ErrorView } from './views/error-page.js';

const BY_KIND: Record<ErrorKind, { status: number; title: string; message?: string }> = {
  invalid: { status: 400, title: 'That request cannot be done' },
  unauthenticated: { status: 401, title: 'Sign in again', message: 'Your session has ended. Sign in again to continue.' },
  forbidden: { status: 403, title: 'Not allowed' },
  not_found: { status: 404, title: 'Not found', message: 'There is nothing here: it may have been deleted, or it belongs to another account.' },
  rate_limited: { status: 429, title: 'Too many requests' },
  unavailable: { status: 503, title: 'Temporarily unavailable' },
};

const BY_STATUS: Record<number, string> = { 400: 'That request cannot be done', 403: 'Request refused', 404: 'Not found', 413: 'Form too large' };

function describe(error: unknown): Omit<ErrorView, 'session'> | undefined {
  if (error instanceof VigilError) {
    const kind = BY_KIND[error.kind];
    return { status: kind.status, title: kind.title, message: kind.message ?? asSentence(error.message) };
  }
  if (error instanceof HttpError) return { status: error.status, title: BY_STATUS[error.status] ?? 'Request refused', message: error.message };
  const parser = error as { type?: string };
  if (parser.type === 'entity.too.large') return { status: 413, title: BY_STATUS[413]!, message: 'The form sent was too large.' };
  if (typeof parser.type === 'string' && parser.type.startsWith('entity.'))
    return { status: 400, title: BY_STATUS[400]!, message: 'The form could not be read.' };
  return undefined;
}

export function notFoundPage(_req: Request, res: Response): void {
  res
    .status(404)
    .type('html')
    .send(errorPage({ ...describe(new HttpError(404, 'There is no dashboard page at this address.'))!, session: localsOf(res).session }));
}

export function dashboardErrors(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const locals = localsOf(res);
  const known = describe(error);
  if (known === undefined) locals.log?.error({ err: error, method: req.method, path: req.path }, 'dashboard request failed');
  if (res.headersSent) return;
  const view = known ?? {
    status: 500,
    title: 'Something went wrong',
    message: 'The dashboard could not do that. Try again; if it keeps failing, report the reference below.',
    reference: locals.requestId,
  };
  res
    .status(view.status)
    .type('html')
    .send(errorPage({ ...view, session: locals.session }));
}
