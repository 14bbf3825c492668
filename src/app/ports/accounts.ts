import type { Account } from '../../domain/accounts/account.js';
import type { StoredApiKey } from '../../domain/accounts/stored-api-key.js';
export type { StoredApiKey } from '../../domain/accounts/stored-api-key.js';

export interface AccountRepository {
  insert(account: Account): void;
  findById(id: string): Account | undefined;
  findByName(name: string): Account | undefined;
  findByNamespace(namespace: string): Account | undefined;
  /** Every account, oldest first (operators' listing; accounts are few). */
  list(): Account[];
  count(): number;
  insertApiKey(key: { id: string; accountId: string; name: string; lookup: string; hash: Buffer; createdAt: string }): void;
  /** Active (not revoked) keys whose hash starts with the lookup prefix, with their accounts. */
  findActiveKeysByLookup(lookup: string): Array<{ key: StoredApiKey; account: Account }>;
  listApiKeys(accountId: string): StoredApiKey[];
  revokeApiKey(accountId: string, keyId: string, at: string): boolean;
  /** Runs fn in one transaction. */
  transaction<T>(fn: () => T): T;
}
