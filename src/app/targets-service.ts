/** Targets (SPEC.md, Targets): the application rules around the store. */
import { timeOrderedUuid } from '../domain/time-ordered-uuid.js';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters, parseSort, sortOrderName } from '../domain/lists/list-query.js';
import { PERFECT_HEALTH } from '../domain/targets/health-score.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import { parseTargetAddress } from '../domain/targets/target-address.js';
import { assertSettingsHostsAllowed } from '../domain/scanners/zap-hosts.js';
import {
  DEFAULT_ZAP_SETTINGS,
  applyTargetUpdate,
  assertTargetDeletable,
  mergeZapSettings,
  normaliseTags,
  type Target,
  type TargetUpdateInput,
  type TargetInput,
  type TargetOrigin,
} from '../domain/targets/target.js';
import { LIST_PAGE_BYTE_BUDGET, type ListResult, type SortedListParams, type Paginator, type RenderedListResult } from './pagination.js';
import { TARGET_FILTER_KEYS, TARGET_SORT_FIELDS, type TargetListRow, type TargetRepository } from './ports.js';

export type TargetListParams = SortedListParams;

/** The dashboard's list: targets with any of the tags and the text in their address or label, newest first. */
export interface TargetSearch {
  tags: string[];
  text: string;
  pageSize: number;
  pageToken?: string | undefined;
}

export class TargetsService {
  constructor(
    private readonly targets: TargetRepository,
    private readonly paginator: Paginator,
    private readonly clock: Clock,
    private readonly allowTargets: readonly Cidr[],
  ) {}

  /**
   * Creates a target. An existing address gives 400 unless `upsert` is set,
   * in which case the sent fields update the existing target (CONTRACT.md).
   */
  create(account: Account, body: TargetInput, upsert: boolean, origin: TargetOrigin = 'MANUAL'): Target {
    const address = parseTargetAddress(body.target, this.allowTargets);
    assertSettingsHostsAllowed(body.scanner_settings?.zap, this.allowTargets);
    const existing = this.targets.findByAddress(account.id, address.value);
    if (existing !== undefined) return this.upsertExisting(existing, body, upsert);
    const target = this.newTarget(account, address.value, body, origin);
    if (this.targets.insert(target)) return target;
    // Lost a race with a concurrent create of the same address.
    return this.upsertExisting(this.targets.findByAddress(account.id, address.value)!, body, upsert);
  }

  private newTarget(account: Account, address: string, body: TargetInput, origin: TargetOrigin): Target {
    return {
      // Time-ordered: the indexes keyed by target id (a target's risks, their uniqueness, its coverage) grow at one end.
      id: timeOrderedUuid(this.clock.now()),
      accountId: account.id,
      target: address,
      label: body.label ?? '',
      tags: normaliseTags(body.tags ?? []),
      healthScore: PERFECT_HEALTH,
      authSeleniumFile: undefined,
      zap: mergeZapSettings({ ...DEFAULT_ZAP_SETTINGS }, body.scanner_settings?.zap),
      origin,
      createdAt: this.clock.now().toISOString(),
      lastScannedAt: null,
    };
  }

  /**
   * Uploaded results may only land on targets that uploads own (CONTRACT.md):
   * an address the account already has from another origin is refused.
   */
  assertUploadable(account: Account, address: string): void {
    const existing = this.targets.findByAddress(account.id, address);
    if (existing !== undefined) assertCreatedFromUploads(existing);
  }

  /**
   * The target an uploaded result names (a normalised address): the one an
   * earlier upload created, with the file's host facts laid over its own, or
   * a new UPLOADED_RESULTS target. Call inside the upload's transaction;
   * `journal` hears of the write in it (before: undefined for a new target),
   * so that a rolled-back upload can undo it (PendingRecordings.noteTarget).
   */
  recordUploaded(
    account: Account,
    address: string,
    facts: { os?: string; hostname?: string },
    journal?: (before: Target | undefined, after: Target) => void,
  ): Target {
    const existing = this.targets.findByAddress(account.id, address);
    if (existing !== undefined) {
      assertCreatedFromUploads(existing);
      const updated: Target = { ...existing, os: facts.os ?? existing.os, hostname: facts.hostname ?? existing.hostname };
      journal?.(existing, updated);
      this.targets.update(updated);
      return updated;
    }
    const target: Target = { ...this.newTarget(account, address, { target: address }, 'UPLOADED_RESULTS'), os: facts.os, hostname: facts.hostname };
    if (!this.targets.insert(target)) return this.recordUploaded(account, address, facts, journal); // created meanwhile
    journal?.(undefined, target);
    return target;
  }

  private upsertExisting(existing: Target, body: TargetInput, upsert: boolean): Target {
    if (!upsert) {
      throw new InvalidRequestError(`target '${existing.target}' already exists (id ${existing.id}); send upsert=true to update it instead`);
    }
    return this.save(existing, body);
  }

  validateAddress(input: string): void {
    parseTargetAddress(input, this.allowTargets);
  }

  /** The account's target for an address, created (MANUAL) when it does not exist yet; for scans of new addresses. */
  findOrCreate(account: Account, input: string): Target {
    const address = parseTargetAddress(input, this.allowTargets);
    return this.targets.findByAddress(account.id, address.value) ?? this.create(account, { target: address.value }, true);
  }

  get(account: Account, id: string): Target {
    const target = this.targets.findById(account.id, id);
    if (target === undefined) throw new NotFoundError('target', id);
    return target;
  }

  update(account: Account, id: string, body: TargetUpdateInput): Target {
    const target = this.get(account, id);
    assertSettingsHostsAllowed(body.scanner_settings?.zap, this.allowTargets);
    return this.save(target, body);
  }

  private save(target: Target, body: TargetUpdateInput): Target {
    const updated = applyTargetUpdate(target, { label: body.label, tags: body.tags, zap: body.scanner_settings?.zap });
    this.targets.update(updated);
    return updated;
  }

  delete(account: Account, id: string): void {
    const target = this.get(account, id);
    assertTargetDeletable(target);
    this.targets.deleteCascade(account.id, target.id);
  }

  list<R>(account: Account, params: TargetListParams, present: (row: TargetListRow) => R): ListResult<R> {
    const { scope, order, query } = this.listQuery(account, params);
    return this.paginator.resultOf(scope, order, this.targets.list(account.id, query), present);
  }

  /** The API's page: its targets' SPEC JSON as the store renders it, within the page byte budget (the hot list path, bench/targets-list.ts). */
  listJson(account: Account, params: TargetListParams): RenderedListResult {
    const { scope, order, query } = this.listQuery(account, params);
    return this.paginator.renderedResultOf(scope, order, this.targets.listJson(account.id, query, LIST_PAGE_BYTE_BUDGET));
  }

  private listQuery(account: Account, params: TargetListParams) {
    const sort = parseSort(params.sort, TARGET_SORT_FIELDS);
    const order = sortOrderName(sort, 'created_at:desc');
    const scope = `${account.id}:targets`;
    const query = {
      filters: parseFilters(params.filters, TARGET_FILTER_KEYS),
      sort,
      pageSize: pageSizeFrom(params.page_size),
      after: this.paginator.cursorFrom(scope, order, params.page_token),
    };
    return { scope, order, query };
  }

  search<R>(account: Account, search: TargetSearch, present: (row: TargetListRow) => R): ListResult<R> {
    const order = 'created_at:desc';
    const scope = `${account.id}:targets`;
    const page = this.targets.list(account.id, {
      filters: search.tags.length === 0 ? {} : { tags: search.tags },
      sort: [],
      pageSize: search.pageSize,
      after: this.paginator.cursorFrom(scope, order, search.pageToken),
      textContains: search.text === '' ? undefined : search.text,
    });
    return this.paginator.resultOf(scope, order, page, present);
  }
}

function assertCreatedFromUploads(existing: Target): void {
  if (existing.origin !== 'UPLOADED_RESULTS') {
    throw new InvalidRequestError(
      `target '${existing.target}' already exists (id ${existing.id}, origin ${existing.origin}); results can only be uploaded for targets that do not exist yet or were created from uploaded results`,
    );
  }
}
