/**
 * Dashboard sign-in: an API key opens a server-side session. The browser
 * holds a random token in a cookie; the store keeps only its SHA-256 hash,
 * the key it was opened with (revoking the key ends the session), a CSRF
 * token for the session's forms, and an absolute expiry.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import type { AccountsService } from './accounts-service.js';
import type { AccountRepository, DashboardSessionRepository } from './ports.js';

/** Sessions last 12 hours from sign-in, however active. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

export interface ActiveSession {
  account: Account;
  apiKeyId: string;
  csrfToken: string;
  expiresAt: string;
}

/** 256 random bits, URL- and cookie-safe. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares two secrets in time that does not depend on where they differ. */
export function secretsEqual(expected: string, presented: string | undefined): boolean {
  if (presented === undefined || expected === '') return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export class DashboardSessionsService {
  constructor(
    private readonly sessions: DashboardSessionRepository,
    private readonly accounts: AccountsService,
    private readonly accountRepository: AccountRepository,
    private readonly clock: Clock,
    private readonly lifetimeMs: number = SESSION_LIFETIME_MS,
  ) {}

  /**
   * Opens a session for a valid, unrevoked API key; throws
   * UnauthenticatedError otherwise. The token is returned this once, for the cookie.
   */
  signIn(apiKey: string): { token: string; session: ActiveSession } {
    const principal = this.accounts.authenticate(apiKey.trim());
    const now = this.clock.now();
    this.sessions.deleteEnded(now.toISOString());
    const token = newSecretToken();
    const csrfToken = newSecretToken();
    const expiresAt = new Date(now.getTime() + this.lifetimeMs).toISOString();
    this.sessions.insert({
      tokenHash: hashToken(token),
      accountId: principal.account.id,
      apiKeyId: principal.apiKeyId,
      csrfToken,
      createdAt: now.toISOString(),
      expiresAt,
    });
    return { token, session: { account: principal.account, apiKeyId: principal.apiKeyId, csrfToken, expiresAt } };
  }

  /** The live session of a cookie token: not expired, its key not revoked, its account still there. */
  resolve(token: string | undefined): ActiveSession | undefined {
    if (token === undefined || token === '') return undefined;
    const stored = this.sessions.findLive(hashToken(token), this.clock.now().toISOString());
    if (stored === undefined) return undefined;
    const account = this.accountRepository.findById(stored.accountId);
    if (account === undefined) return undefined;
    return { account, apiKeyId: stored.apiKeyId, csrfToken: stored.csrfToken, expiresAt: stored.expiresAt };
  }

  signOut(token: string | undefined): void {
    if (token !== undefined && token !== '') this.sessions.delete(hashToken(token));
  }
}
