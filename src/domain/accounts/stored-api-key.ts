/**
 * An API key as stored: only the SHA-256 hash of the key (api-key.ts). Moved from src/app/ports/accounts.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
export interface StoredApiKey {
  id: string;
  accountId: string;
  name: string;
  hash: Buffer;
  createdAt: string;
  revokedAt: string | null;
}
