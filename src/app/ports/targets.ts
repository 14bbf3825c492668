import type { Filters, SortField } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { HealthGrade } from '../../domain/targets/health-score.js';
import type { Target, TargetOrigin } from '../../domain/targets/target.js';
import type { Page } from './lists.js';

export const TARGET_FILTER_KEYS = ['tags', 'label', 'target'] as const;
export type TargetFilterKey = (typeof TARGET_FILTER_KEYS)[number];
export const TARGET_SORT_FIELDS = ['label', 'target', 'created_at', 'last_scanned'] as const;
export type TargetSortField = (typeof TARGET_SORT_FIELDS)[number];

export interface TargetListQuery {
  filters: Filters<TargetFilterKey>;
  sort: Array<SortField<TargetSortField>>;
  pageSize: number;
  after: CursorValue[] | undefined;
  /** Only targets whose address or label contains this text, ignoring case (the dashboard's search box). */
  textContains?: string | undefined;
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
  os: string | null;
  hostname: string | null;
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
  findByIds(accountId: string, ids: readonly string[]): Target[];
  /** Targets carrying any of the (lowercase) tags, oldest first. */
  findByTags(accountId: string, tags: readonly string[]): Target[];
}
