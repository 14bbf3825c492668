/** The two dashboard cookies: the session token and the sign-in form's token. Both HttpOnly, SameSite=Strict, Path=/dashboard. */
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'vigil_session';
/** Double-submit token of the sign-in form, against login CSRF before any session exists. */
export const SIGN_IN_COOKIE = 'vigil_sign_in';

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  maxAgeSeconds: number;
}

export function setCookie(res: Response, name: string, value: string, options: CookieOptions): void {
  const attributes = [`${name}=${value}`, 'Path=/dashboard', 'HttpOnly', 'SameSite=Strict', `Max-Age=${options.maxAgeSeconds}`];
  if (options.secure) attributes.push('Secure');
  res.append('Set-Cookie', attributes.join('; '));
}

export function clearCookie(res: Response, name: string, secure: boolean): void {
  setCookie(res, name, '', { secure, maxAgeSeconds: 0 });
}
