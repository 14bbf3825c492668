/**
 * Response headers of every dashboard page, and the checks every POST
 * passes: it must come from the service's own origin, and (once signed in)
 * carry the session's synchronizer token.
 */
import type { NextFunction, Request, Response } from 'express';
import { secretsEqual } from '../../app/dashboard-sessions.js';
import { HttpError } from '../errors.js';
import { formField, localsOf } from './context.js';

const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
}

const FOREIGN_POST = 'This form was sent from another site, so it was refused. Open the dashboard directly and try again.';

/**
 * Refuses a POST from another site. The service's own origin is
 * VIGIL_PUBLIC_URL's, or the one the request was addressed to (a browser on
 * another site cannot send our Host with its own Origin). Browsers send
 * `Origin: null` for same-origin form posts from pages with
 * `Referrer-Policy: no-referrer`, as ours are; then Sec-Fetch-Site, which
 * pages cannot set, must say same-origin. A client that sends neither header
 * still needs the form's token.
 */
export function sameOriginPosts(publicUrl: string) {
  const publicOrigin = new URL(publicUrl).origin;
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (req.method !== 'POST') return next();
    const origin = req.get('origin');
    const site = req.get('sec-fetch-site');
    let allowed: boolean;
    if (origin !== undefined && origin !== 'null') allowed = origin === publicOrigin || origin === `${req.protocol}://${req.get('host') ?? ''}`;
    else if (site !== undefined) allowed = site === 'same-origin';
    else allowed = origin === undefined;
    next(allowed ? undefined : new HttpError(403, FOREIGN_POST));
  };
}

/** Every signed-in POST carries the session's token in the hidden field `csrf`; compared in constant time. */
export function requireCsrfToken(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'POST') return next();
  const session = localsOf(res).session;
  const valid = session !== undefined && secretsEqual(session.csrfToken, formField(req, 'csrf'));
  next(valid ? undefined : new HttpError(403, 'This form has expired or did not come from this dashboard. Reload the page and try again.'));
}
