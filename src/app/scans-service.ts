/** Scans (SPEC.md, Scans): starting, listing, stopping and deleting them, and their result files. */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { presentScan, renderedScan, RISK_ID_JSON_CHARS, type RenderedScan } from './present/scan.js';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { newEvent, type OutboxEvent } from '../domain/events/event.js';
import { pageSizeFrom, parseFilters } from '../domain/lists/list-query.js';
import { isTerminal, splitTargets, type Scan, type ScanSummary } from '../domain/scans/scan.js';
import { setCondition } from '../domain/conditions/condition.js';
import { assertTypeAllowed, isAuthenticated, selectorOf, type StartScanRequest } from '../domain/scans/start-scan.js';
import type { Target } from '../domain/targets/target.js';
import { GroupCommit } from './group-commit.js';
import { LIST_PAGE_BYTE_BUDGET, type ListParams, type ListResult, type Paginator, type StreamedListResult } from './pagination.js';
import type { ScanPdfs } from './scan-pdfs.js';
import type { RiskHistory } from './risk-history.js';
import {
  SCAN_FILTER_KEYS,
  type EventOutbox,
  type Page,
  type ResultFileStore,
  type ScanListQuery,
  type ScanRepository,
  type StoredResultFile,
  type TargetRepository,
} from './ports.js';
import type { TargetsService } from './targets-service.js';

/**
 * Told about every Scan written here that the Scan reconciler should look at
 * (new, stopping, deleted), by its account and object name, which the
 * reconciler keys it by.
 */
export type ScanNotifier = (scan: Pick<Scan, 'accountId' | 'name'>) => void;

/** Scans are listed newest first, the only order (SPEC.md). */
const SCAN_ORDER = 'created_at:desc';

export class ScansService {
  private notify: ScanNotifier = () => undefined;
  /** POST /v1/scans: admissions that arrive together share one transaction and one disk flush (bench/scans.ts). */
  private readonly admissions: GroupCommit;

  constructor(
    private readonly scans: ScanRepository,
    private readonly targetRepository: TargetRepository,
    private readonly targets: TargetsService,
    private readonly paginator: Paginator,
    private readonly clock: Clock,
    private readonly resultFiles: ResultFileStore,
    private readonly history: RiskHistory,
    private readonly outbox: EventOutbox,
    /** The store's group commit (composition root); POSTs share its transactions. */
    admissions: GroupCommit,
    /** Each SUCCEEDED scan's PDF: a download of one still being made waits for it. */
    private readonly scanPdfs?: ScanPdfs,
  ) {
    this.admissions = admissions;
  }

  /** The Scan reconciler registers here; the service never knows which runtime runs scans. */
  onScanChanged(notify: ScanNotifier): void {
    this.notify = notify;
  }

  /**
   * Creates one Scan per chunk of the type's target limit and returns them
   * all; the API answers with the first. A string `name` names the first
   * Scan's object (a Scan applied with kubectl keeps its own name) and the rest
   * get generated ones; a function names each chunk (the deterministic names
   * of scheduled runs).
   */
  start(account: Account, request: StartScanRequest, scheduledBy: string | null = null, name?: string | ((index: number) => string)): Scan[] {
    assertTypeAllowed(account, request);
    // One transaction, so one durable commit, for the targets it creates and
    // the Scans: each commit waits for the disk (bench/scans.ts).
    const scans = this.history.transaction(() => this.insertScans(account, request, scheduledBy, name));
    for (const scan of scans) this.notify(scan);
    return scans;
  }

  /**
   * start() for the API: the same Scans and events, written in a transaction
   * shared with the other requests of the same turn of the event loop
   * (group commit); resolves once that is committed, so an answered POST is
   * durable. A bad request fails alone.
   */
  async startShared(account: Account, request: StartScanRequest): Promise<Scan[]> {
    assertTypeAllowed(account, request);
    const scans = await this.admissions.run(() => this.insertScans(account, request, null, undefined));
    for (const scan of scans) this.notify(scan);
    return scans;
  }

  private insertScans(account: Account, request: StartScanRequest, scheduledBy: string | null, name: string | ((index: number) => string) | undefined): Scan[] {
    const selected = this.selectTargets(account, request);
    const now = this.clock.now();
    const counted = this.scans.monthlyUsage(account.id, now.toISOString().slice(0, 7));
    const scans = splitTargets(request.type, selected).map((chunk, index) => {
      const overLimit = account.monthlyScanLimit !== null && counted + index >= account.monthlyScanLimit;
      const scan = this.newScan(account, request, chunk, overLimit, scheduledBy, now);
      if (typeof name === 'function') return { ...scan, name: name(index) };
      return index === 0 && name !== undefined ? { ...scan, name } : scan;
    });
    const events = scans.map((scan) => newEvent(account.id, 'scan.created', presentScan(scan), now));
    this.scans.insert(scans, events);
    return scans;
  }

  private newScan(account: Account, request: StartScanRequest, targets: Target[], overLimit: boolean, scheduledBy: string | null, now: Date): Scan {
    const id = randomUUID();
    return {
      id,
      accountId: account.id,
      name: `scan-${id}`,
      type: request.type,
      state: overLimit ? 'OVER_LIMIT' : 'QUEUED',
      progress: 0,
      isAuthenticated: isAuthenticated(
        request.type,
        request.use_authentication,
        targets.some((t) => t.authSeleniumFile !== undefined),
      ),
      requestedTargets: targets.map((target) => ({ targetId: target.id, target: target.target })),
      resolvedTargets: [],
      skippedTargets: [],
      conditions: overLimit
        ? setCondition(
            [],
            {
              type: 'Admitted',
              status: 'False',
              reason: 'MonthlyScanLimitReached',
              message: `the account's monthly limit of ${account.monthlyScanLimit} scans is reached`,
            },
            now,
          )
        : [],
      results: [],
      risks: { newOpen: [], stillOpen: [], closed: [] },
      scheduledBy,
      reportId: null,
      createdAt: now.toISOString(),
      startedAt: null,
      finishedAt: overLimit ? now.toISOString() : null,
    };
  }

  private selectTargets(account: Account, request: StartScanRequest): Target[] {
    const selector = selectorOf(request);
    switch (selector.kind) {
      case 'targets':
        // Validate every address before creating any target, so a bad item leaves nothing behind.
        selector.values.forEach((value, index) => this.withIndex(index, () => this.targets.validateAddress(value)));
        return uniqueById(selector.values.map((value, index) => this.withIndex(index, () => this.targets.findOrCreate(account, value))));
      case 'target_ids': {
        const found = this.targetRepository.findByIds(account.id, [...new Set(selector.values)]);
        if (found.length === 0) throw new InvalidRequestError('none of target_ids is a target of this account');
        return found;
      }
      case 'tags': {
        const found = this.targetRepository.findByTags(account.id, [...new Set(selector.values.map((tag) => tag.trim().toLowerCase()))]);
        if (found.length === 0) throw new InvalidRequestError(`no target of this account has any of the tags ${selector.values.join(', ')}`);
        return found;
      }
    }
  }

  private withIndex<T>(index: number, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof InvalidRequestError) throw new InvalidRequestError(`targets[${index}]: ${error.message}`);
      throw error;
    }
  }

  /** The account's Scan whose object has this name (a Scan applied with kubectl), if any. */
  findByName(account: Account, name: string): Scan | undefined {
    return this.scans.findByName(account.id, name);
  }

  get(account: Account, id: string): Scan {
    const scan = this.scans.findById(account.id, id);
    if (scan === undefined) throw new NotFoundError('scan', id);
    return scan;
  }

  /** A page of the account's scans as lists show them (the dashboard): risk lists counted, not read. */
  list(account: Account, params: ListParams): ListResult<ScanSummary> {
    const { scope, page } = this.summaries(account, params);
    return this.paginator.resultOf(scope, SCAN_ORDER, page, (summary) => summary);
  }

  /**
   * GET /v1/scans: a page of scans as the API's JSON, each with its whole
   * risk lists, streamed (renderedScan). The page ends before the scan
   * that would pass LIST_PAGE_BYTE_BUDGET, counted from the lists' lengths
   * before any is read (one scan always fits), so its next_page_token is
   * known before the first piece is sent. The store reads whole only the
   * scans an estimate of the same size lets in (ScanListQuery.budget).
   */
  listJson(account: Account, params: ListParams): StreamedListResult {
    const { scope, page } = this.summaries(account, params, {
      chars: LIST_PAGE_BYTE_BUDGET,
      sizeOf: ({ riskIds, storedChars }) => storedChars + riskIds * RISK_ID_JSON_CHARS,
    });
    const sent: Array<{ id: string; scan: RenderedScan }> = [];
    let nextCursor = page.nextCursor;
    let length = 0;
    for (const [index, summary] of page.items.entries()) {
      const scan = renderedScan(summary);
      length += scan.length + 1;
      if (index > 0 && length > LIST_PAGE_BYTE_BUDGET) {
        nextCursor = page.cursorAt!(index - 1);
        break;
      }
      sent.push({ id: summary.id, scan });
    }
    return { pieces: this.scanPieces(sent), nextPageToken: this.paginator.tokenFor(scope, SCAN_ORDER, nextCursor) };
  }

  private async *scanPieces(scans: ReadonlyArray<{ id: string; scan: RenderedScan }>): AsyncGenerator<string> {
    for (const [index, { id, scan }] of scans.entries()) {
      if (index > 0) yield ',';
      yield* scan.pieces((list, position, count) => this.scans.riskListJson(id, list, position, count));
    }
  }

  private summaries(account: Account, params: ListParams, budget?: ScanListQuery['budget']): { scope: string; page: Page<ScanSummary> } {
    const scope = `${account.id}:scans`;
    const page = this.scans.list(account.id, {
      filters: parseFilters(params.filters, SCAN_FILTER_KEYS),
      pageSize: pageSizeFrom(params.page_size),
      after: this.paginator.cursorFrom(scope, SCAN_ORDER, params.page_token),
      budget,
    });
    return { scope, page };
  }

  /** QUEUED stops at once; RUNNING moves to STOPPING until the controller has removed the workload. */
  stop(account: Account, id: string): Scan {
    const scan = this.get(account, id);
    if (isTerminal(scan.state)) throw new InvalidRequestError(`scan ${id} is already ${scan.state} and cannot be stopped`);
    if (scan.state === 'STOPPING') return scan;
    const now = this.clock.now();
    const stopped: Scan = scan.state === 'QUEUED' ? { ...scan, state: 'STOPPED', finishedAt: now.toISOString() } : { ...scan, state: 'STOPPING' };
    this.saveWithEvent(stopped, now);
    this.notify(stopped);
    return stopped;
  }

  /**
   * SPEC.md: the Scan's findings are no longer considered; every risk it
   * touched is recomputed from what remains. The scan goes at once, with a
   * journal of its rows to sweep and of what to recompute; both follow in
   * chunks (RiskHistory.forgetDeletedScan) and are done when this resolves.
   */
  async delete(account: Account, id: string): Promise<void> {
    // Its summary: its whole lists (40,020 ids in bench/scale.ts) were read here only to check its state.
    const scan = this.scans.findSummary(account.id, id);
    if (scan === undefined) throw new NotFoundError('scan', id);
    if (!isTerminal(scan.state)) {
      throw new InvalidRequestError(`scan ${id} is ${scan.state}; only SUCCEEDED, STOPPED, FAILED or OVER_LIMIT scans can be deleted (stop it first)`);
    }
    this.history.transaction(() => {
      this.history.journalForget(account.id, id);
      this.scans.delete(account.id, id);
    });
    this.notify(scan);
    await this.history.forgetDeletedScan(id, (events) => this.outbox.append(events));
    // A folder whose removal fails has no row left: the start-up sweep of result files removes it.
    this.resultFiles.removeScan(id).catch(() => undefined);
  }

  /**
   * A result file of a SUCCEEDED scan of the account, and a stream of its
   * bytes; the scan's PDF is made first when it is not yet (ScanPdfs).
   */
  async openResult(account: Account, resultId: string): Promise<{ file: StoredResultFile; content: Readable }> {
    let file = this.scans.findResult(account.id, resultId);
    if (file === undefined) throw new NotFoundError('result', resultId);
    const scan = this.scans.findById(account.id, file.scanId);
    if (scan?.state !== 'SUCCEEDED') throw new NotFoundError('result', resultId);
    if (this.scanPdfs?.isPending(file.id) === true) {
      await this.scanPdfs.ensureRendered({ resultId: file.id, scanId: file.scanId, accountId: account.id });
      // Its size is known now; gone if the scan was deleted meanwhile.
      file = this.scans.findResult(account.id, resultId);
      if (file === undefined) throw new NotFoundError('result', resultId);
    }
    const inRow = this.scans.resultContent(file.id);
    return { file, content: inRow !== undefined ? Readable.from([inRow]) : this.resultFiles.open(file.scanId, file.fileName) };
  }

  /** The stored files behind a scan's results (names and sizes), for listing them. */
  resultFilesOf(account: Account, scan: Scan): StoredResultFile[] {
    return scan.results.flatMap((result) => this.scans.findResult(account.id, result.resultId) ?? []);
  }

  private saveWithEvent(scan: Scan, now: Date): void {
    const events: OutboxEvent[] = [newEvent(scan.accountId, 'scan.updated', presentScan(scan), now)];
    if (!this.scans.save(scan, events)) throw new NotFoundError('scan', scan.id);
  }
}

function uniqueById(targets: Target[]): Target[] {
  return [...new Map(targets.map((target) => [target.id, target])).values()];
}
