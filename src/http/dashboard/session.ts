/** Finds the signed-in session from the cookie; pages that need one send everyone else to sign in. */
import type { NextFunction, Request, Response } from 'express';
import type { DashboardSessionsService } from '../../app/dashboard-sessions.js';
import { localsOf } from './context.js';
import { readCookie, SESSION_COOKIE } from './cookies.js';
import { PATHS } from './paths.js';

export function loadSession(sessions: DashboardSessionsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const token = readCookie(req, SESSION_COOKIE);
    const session = sessions.resolve(token);
    if (session !== undefined) {
      const locals = localsOf(res);
      locals.session = session;
      locals.sessionToken = token;
      locals.principal = { account: session.account, apiKeyId: session.apiKeyId };
    }
    next();
  };
}

export function requireSession(_req: Request, res: Response, next: NextFunction): void {
  if (localsOf(res).session !== undefined) return next();
  res.redirect(303, PATHS.signIn);
}
