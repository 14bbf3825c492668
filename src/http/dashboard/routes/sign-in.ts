/**
 * Signing in and out. The sign-in form is protected against login CSRF by
 * the Origin check and a double-submitted token (cookie and hidden field);
 * failed attempts are throttled per client address, and the key is never
 * logged or echoed.
 */
import type { Request, Response, Router } from 'express';
import { newSecretToken, secretsEqual, SESSION_LIFETIME_MS, type DashboardSessionsService } from '../../../app/dashboard-sessions.js';
import { RateLimitedError, UnauthenticatedError } from '../../../domain/errors.js';
import type { RateLimiter } from '../../rate-limiter.js';
import { formField, localsOf, named } from '../context.js';
import { clearCookie, readCookie, setCookie, SESSION_COOKIE, SIGN_IN_COOKIE } from '../cookies.js';
import { noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { signInPage, type SignInView } from '../views/sign-in.js';

export interface SignInDeps {
  sessions: DashboardSessionsService;
  /** Failed sign-ins per client address. */
  signInLimiter: RateLimiter;
  /** Cookies get Secure when the public URL is https. */
  secureCookies: boolean;
}

const SIGN_IN_FORM_SECONDS = 60 * 60;

/** Every rendering of the form gets a fresh token, in its cookie and its hidden field. */
function renderForm(res: Response, deps: SignInDeps, status: number, view: Omit<SignInView, 'formToken'>): void {
  const formToken = newSecretToken();
  setCookie(res, SIGN_IN_COOKIE, formToken, { secure: deps.secureCookies, maxAgeSeconds: SIGN_IN_FORM_SECONDS });
  res
    .status(status)
    .type('html')
    .send(signInPage({ formToken, ...view }));
}

function attempt(req: Request, res: Response, deps: SignInDeps): void {
  const client = `sign-in:${req.socket.remoteAddress ?? 'unknown'}`;
  if (!secretsEqual(readCookie(req, SIGN_IN_COOKIE) ?? '', formField(req, 'csrf'))) {
    return renderForm(res, deps, 403, { error: 'The sign-in form had expired. Enter the key again.' });
  }
  try {
    deps.signInLimiter.check(client);
    const { token, session } = deps.sessions.signIn(formField(req, 'api_key') ?? '');
    deps.sessions.signOut(readCookie(req, SESSION_COOKIE));
    setCookie(res, SESSION_COOKIE, token, { secure: deps.secureCookies, maxAgeSeconds: SESSION_LIFETIME_MS / 1000 });
    clearCookie(res, SIGN_IN_COOKIE, deps.secureCookies);
    localsOf(res).log.info({ account_id: session.account.id, api_key_id: session.apiKeyId }, 'dashboard sign-in');
    res.redirect(303, PATHS.home);
  } catch (error) {
    if (error instanceof RateLimitedError) {
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return renderForm(res, deps, 429, { error: `Too many failed sign-ins from your address. Wait ${error.retryAfterSeconds} seconds and try again.` });
    }
    if (!(error instanceof UnauthenticatedError)) throw error;
    deps.signInLimiter.takeQuietly(client);
    localsOf(res).log.warn({ client: req.socket.remoteAddress }, 'dashboard sign-in refused');
    renderForm(res, deps, 401, { error: 'That API key is not valid, or it has been revoked.' });
  }
}

export function signInRoutes(router: Router, deps: SignInDeps): void {
  router.get('/sign-in', named('dashboard.signIn'), (req, res) => {
    if (localsOf(res).session !== undefined) return res.redirect(303, PATHS.home);
    renderForm(res, deps, 200, { notice: noticeFrom(req) });
  });
  router.post('/sign-in', named('dashboard.signIn'), (req, res) => attempt(req, res, deps));
}

/** Sign-out sits behind the session and CSRF checks like every other form. */
export function signOutRoute(router: Router, deps: Pick<SignInDeps, 'sessions' | 'secureCookies'>): void {
  router.post('/sign-out', named('dashboard.signOut'), (_req, res) => {
    endSession(res, deps.sessions, deps.secureCookies);
    res.redirect(303, withNotice(PATHS.signIn, 'signed-out'));
  });
}

export function endSession(res: Response, sessions: DashboardSessionsService, secureCookies: boolean): void {
  sessions.signOut(localsOf(res).sessionToken);
  clearCookie(res, SESSION_COOKIE, secureCookies);
}
