/**
 * The interfaces the middle ring depends on. Adapters (the SQLite store, the
 * Kubernetes client, the embedded runner) implement them; only the
 * composition root knows which.
 */
import type { Account } from '../domain/accounts/account.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { Filters, SortField } from '../domain/lists/list-query.js';
import type { HealthGrade } from '../domain/targets/health-score.js';
import type { Target, TargetOrigin } from '../domain/targets/target.js';

export interface StoredApiKey {
  id: string;
  accountId: string;
  name: string;
  hash: Buffer;
  createdAt: string;
  revokedAt: string | null;
}

export interface AccountRepository {
  insert(account: Account): void;
  findById(id: string): Account | undefined;
  findByName(name: string): Account | undefined;
  findByNamespace(namespace: string): Account | undefined;
  count(): number;
  insertApiKey(key: { id: string; accountId: string; name: string; lookup: string; hash: Buffer; createdAt: string }): void;
  /** Active (not revoked) keys whose hash starts with the lookup prefix, with their accounts. */
  findActiveKeysByLookup(lookup: string): Array<{ key: StoredApiKey; account: Account }>;
  listApiKeys(accountId: string): StoredApiKey[];
  revokeApiKey(accountId: string, keyId: string, at: string): boolean;
  /** Runs fn in one transaction. */
  transaction<T>(fn: () => T): T;
}

export interface Page<T> {
  items: T[];
  /** Sort key values of the last item when more items follow. */
  nextCursor: CursorValue[] | undefined;
}

export const TARGET_FILTER_KEYS = ['tags', 'label', 'target'] as const;
export type TargetFilterKey = (typeof TARGET_FILTER_KEYS)[number];
export const TARGET_SORT_FIELDS = ['label', 'target', 'created_at', 'last_scanned'] as const;
export type TargetSortField = (typeof TARGET_SORT_FIELDS)[number];

export interface TargetListQuery {
  filters: Filters<TargetFilterKey>;
  sort: Array<SortField<TargetSortField>>;
  pageSize: number;
  after: CursorValue[] | undefined;
}

/**
 * A target as a list reads it: the read model of the hot list path. Its JSON
 * fields stay as the stored text so that a page can be rendered without
 * parsing and re-serialising them.
 */
export interface TargetListRow {
  id: string;
  target: string;
  label: string;
  tagsJson: string;
  zapSettingsJson: string;
  origin: TargetOrigin;
  healthScore: number;
  healthGrade: HealthGrade;
  authSeleniumFile: string | null;
  createdAt: string;
  lastScannedAt: string | null;
}

export interface TargetRepository {
  /** Inserts a new target; returns false when the account already has this target address. */
  insert(target: Target): boolean;
  findById(accountId: string, id: string): Target | undefined;
  findByAddress(accountId: string, address: string): Target | undefined;
  update(target: Target): void;
  /** Deletes the target and everything that hangs off it, in one transaction. */
  deleteCascade(accountId: string, id: string): void;
  list(accountId: string, query: TargetListQuery): Page<TargetListRow>;
}
