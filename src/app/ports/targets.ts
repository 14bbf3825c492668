import type { Filters, SortField } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Target } from '../../domain/targets/target.js';
import type { Page } from './lists.js';
import type { TargetListRow, AttachmentKind, TargetAttachment } from '../../domain/targets/target-records.js';
export type { TargetListRow, AttachmentKind, TargetAttachment } from '../../domain/targets/target-records.js';

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

/** A list page already rendered as JSON: its items' texts joined with commas, as UTF-8 bytes. */
export interface RenderedPage {
  body: Uint8Array;
  count: number;
  nextCursor: CursorValue[] | undefined;
}

export interface TargetRepository {
  /** Inserts a new target; returns false when the account already has this target address. */
  insert(target: Target): boolean;
  findById(accountId: string, id: string): Target | undefined;
  findByAddress(accountId: string, address: string): Target | undefined;
  update(target: Target): void;
  /** Writes only what a recording changes on a target: its health score and grade, and when it was last scanned. */
  refresh(target: Target): void;
  /** Deletes the target and everything that hangs off it, in one transaction. */
  deleteCascade(accountId: string, id: string): void;
  list(accountId: string, query: TargetListQuery): Page<TargetListRow>;
  /**
   * list() for the API: the page's targets as their SPEC JSON texts joined
   * with commas (the inside of the `data` array), rendered by the store: at
   * least one target, and otherwise no more than `byteBudget` bytes of them.
   */
  listJson(accountId: string, query: TargetListQuery, byteBudget: number): RenderedPage;
  findByIds(accountId: string, ids: readonly string[]): Target[];
  /** Targets carrying any of the (lowercase) tags, oldest first. */
  findByTags(accountId: string, tags: readonly string[]): Target[];
  /**
   * Attaches a file (replacing the one of the same kind) and records its name
   * on the target, in one transaction; false when the account has no such target.
   */
  attach(accountId: string, targetId: string, attachment: TargetAttachment): boolean;
  /** The attached file of a kind, or undefined. */
  attachment(accountId: string, targetId: string, kind: AttachmentKind): TargetAttachment | undefined;
}
