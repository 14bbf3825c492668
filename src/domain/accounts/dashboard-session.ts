/**
 * A dashboard sign-in as stored. Moved from src/app/ports/dashboard.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
/** A dashboard sign-in; only the SHA-256 hash of its token is stored. */
export interface DashboardSession {
  tokenHash: Buffer;
  accountId: string;
  apiKeyId: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}
