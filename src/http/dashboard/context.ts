/** What the dashboard keeps per request beside the common request context. */
import type { Request, Response } from 'express';
import type { ActiveSession } from '../../app/dashboard-sessions.js';
import type { RequestContext } from '../request-context.js';

export interface DashboardLocals extends RequestContext {
  session?: ActiveSession;
  /** The cookie's token of the live session, to end it on sign-out. */
  sessionToken?: string;
}

export const localsOf = (res: Response): DashboardLocals => res.locals as DashboardLocals;

/** The signed-in session; routes behind requireSession always have one. */
export function sessionOf(res: Response): ActiveSession {
  const session = localsOf(res).session;
  if (session === undefined) throw new Error('dashboard route reached without a session');
  return session;
}

/** A field of the url-encoded form, or undefined when it is absent or repeated. */
export function formField(req: Request, name: string): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a form field sent several times (a group of checkboxes); non-string values are dropped. */
export function formFields(req: Request, name: string): string[] {
  const body = req.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** A list typed into one field, separated by commas or lines: "a, b,, c" is ['a', 'b', 'c']. */
export function listOf(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A query parameter as a single string ('' when absent or repeated). */
export function queryText(req: Request, name: string): string {
  const value = req.query[name];
  return typeof value === 'string' ? value : '';
}

/** Names the route for metrics and logs: a fixed word, so labels stay bounded. */
export function named(route: string) {
  return (_req: Request, res: Response, next: () => void): void => {
    localsOf(res).route = route;
    next();
  };
}
