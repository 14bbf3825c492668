/**
 * Uploading scanner results (SPEC.md, Imported results). An upload becomes a
 * SUCCEEDED Scan of its targets that feeds the same risk history as scans
 * Vigil runs. Everything is checked and parsed first; then the result file
 * (written as it arrived, see ResultUpload) is committed under its name and
 * the targets, the Scan, its risks and every event are written
 * in short transactions under a pending marker (migration 0013): a refusal
 * on the way rolls back what was written, and so does the next start after
 * a crash, so a refused or interrupted upload leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import { newImportScan } from '../domain/imports/import-scan.js';
import { MAX_IMPORT_FILE_BYTES, MAX_IMPORTED_TARGETS, storedResultFile, targetsComeFromFile, type ImportableScanType } from '../domain/imports/importable.js';
import { givenTarget, inferTargets, type InferredTargets, type SkippedHost } from '../domain/imports/inferred-targets.js';
import type { Scan } from '../domain/scans/scan.js';
import type { Source } from '../domain/sources/source.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import type { Target } from '../domain/targets/target.js';
import type { PendingRecording, PendingRecordings, RecordingStaging, ResultFileStore, ScanRepository, StoredResultFile } from './ports.js';
import { yieldToEventLoop } from './event-loop.js';
import { ResultUpload, type ParsedUpload } from './result-upload.js';
import { dropStaged, TRANSACTION_MS, type RiskHistory, type TargetFindings } from './risk-history.js';
import type { ScanPdfs } from './scan-pdfs.js';
import type { SourcesService } from './sources-service.js';
import type { TargetsService } from './targets-service.js';

export interface ImportRequest {
  source_id: string;
  scan_type: ImportableScanType;
  target?: string | undefined;
}

export interface ImportedResult {
  scan: Scan;
  source: Source;
  targets: Target[];
  skippedHosts: SkippedHost[];
}

/** How many refused hosts an error message names. */
const NAMED_HOSTS = 5;

export class ImportsService {
  private notify: (scan: Scan) => void = () => undefined;

  constructor(
    private readonly sources: SourcesService,
    private readonly targets: TargetsService,
    private readonly scans: ScanRepository,
    private readonly resultFiles: ResultFileStore,
    private readonly history: RiskHistory,
    private readonly clock: Clock,
    private readonly allowTargets: readonly Cidr[],
    private readonly pending: PendingRecordings,
    private readonly staging: RecordingStaging,
    /** Each imported scan's PDF, as for a scan Vigil ran: listed with its risks, rendered right after. */
    private readonly scanPdfs?: ScanPdfs,
  ) {}

  /** The Scan reconciler registers here: an imported scan gets its face (Kubernetes: its custom resource) as any Scan. */
  onScanChanged(notify: (scan: Scan) => void): void {
    this.notify = notify;
  }

  /**
   * A new upload; its file is written to the data directory as it arrives,
   * under the id its Scan will have, and its findings are staged in the store
   * as they are parsed.
   */
  newUpload(): ResultUpload {
    const scanId = randomUUID();
    return new ResultUpload(MAX_IMPORT_FILE_BYTES, scanId, this.resultFiles.incoming(scanId), {
      sink: this.staging.findingSink(scanId),
      drop: () => this.staging.drop(scanId),
    });
  }

  /** Checks a form field as it arrives, so that a bad upload is refused before its file is read. */
  checkField(account: Account, upload: ResultUpload, name: string, value: string): void {
    if (name === 'scan_type') upload.useScanType(value);
    if (name === 'source_id') this.sources.importedSource(account, value);
  }

  async importResult(account: Account, request: ImportRequest, upload: ParsedUpload): Promise<ImportedResult> {
    const source = this.sources.importedSource(account, request.source_id);
    const inferred = this.inferTargets(request, upload);
    for (const batch of batches(inferred.targets, TARGETS_PER_TRANSACTION)) {
      for (const target of batch) this.targets.assertUploadable(account, target.target);
      await yieldToEventLoop();
    }
    const scanId = upload.scanId;
    this.pending.begin(scanId, account.id, 'IMPORT', this.clock.now().toISOString());
    try {
      const file = await this.storeFile(account, scanId, upload);
      return await this.record(account, { scanId, source, inferred, file, type: upload.scanType });
    } catch (error) {
      await this.discard(account.id, scanId);
      throw error;
    } finally {
      await dropStaged(this.staging, scanId);
    }
  }

  /**
   * Start-up, after the risk history rolled back every interrupted
   * recording: the uploads among them go entirely (their Scan, result file).
   */
  async discardInterrupted(recordings: readonly PendingRecording[]): Promise<void> {
    for (const recording of recordings) if (recording.kind === 'IMPORT') await this.discard(recording.accountId, recording.scanId);
  }

  private async discard(accountId: string, scanId: string): Promise<void> {
    this.history.transaction(() => {
      this.history.rollBack(accountId, scanId);
      this.scans.delete(accountId, scanId);
    });
    await this.history.sweepDeletedScan(scanId);
    await this.resultFiles.removeScan(scanId);
  }

  private inferTargets(request: ImportRequest, upload: ParsedUpload): InferredTargets {
    if (!targetsComeFromFile(upload.scanType)) {
      if (request.target === undefined || request.target.trim() === '') {
        throw new InvalidRequestError(`target is required for ${upload.scanType} uploads: send the URL that was scanned`);
      }
      return { targets: [givenTarget(request.target.trim(), this.allowTargets)], skipped: [] };
    }
    const inferred = inferTargets(upload.result.hosts, this.allowTargets);
    if (inferred.targets.length === 0) throw new InvalidRequestError(noTargetMessage(inferred.skipped));
    if (inferred.targets.length > MAX_IMPORTED_TARGETS) {
      throw new InvalidRequestError(`the file names ${inferred.targets.length} hosts; one upload may hold at most ${MAX_IMPORTED_TARGETS}, so split the scan`);
    }
    return inferred;
  }

  private async storeFile(account: Account, scanId: string, upload: ParsedUpload): Promise<StoredResultFile> {
    const { fileName, contentType } = storedResultFile(upload.scanType);
    const { size, sha256 } = await upload.file.commit(fileName);
    return { id: randomUUID(), scanId, accountId: account.id, fileName, contentType, size, sha256, createdAt: this.clock.now().toISOString() };
  }

  /**
   * Writes the upload in short transactions with a turn of the event loop
   * between them, so that a large file never stalls other requests: the
   * targets, then the Scan, then its risks a few targets at a time
   * (RiskHistory.recordScanInChunks), and last the Scan's risk lists with
   * scan.created and every risk event.
   */
  private async record(account: Account, input: RecordInput): Promise<ImportedResult> {
    const targets: Target[] = [];
    // Each target written goes in the recording's journal in the same transaction: a crash before the end takes it back at start-up.
    const journal = (before: Target | undefined, after: Target) => this.pending.noteTarget(input.scanId, before, after);
    const inferred = input.inferred.targets;
    for (let next = 0; next < inferred.length;) {
      this.history.transaction(() => {
        const started = performance.now();
        const end = Math.min(inferred.length, next + TARGETS_PER_TRANSACTION);
        do {
          const target = inferred[next++]!;
          targets.push(this.targets.recordUploaded(account, target.target, target, journal));
        } while (next < end && performance.now() - started < TRANSACTION_MS);
      });
      await yieldToEventLoop();
    }
    const draft = newImportScan({
      id: input.scanId,
      accountId: account.id,
      type: input.type,
      targets,
      source: input.source,
      skippedHosts: input.inferred.skipped.length,
      resultId: input.file.id,
      contentType: input.file.contentType,
      at: input.file.createdAt,
    });
    this.history.transaction(() => {
      this.scans.insertImported(draft, [input.file]);
      this.sources.linkScan(draft.id, input.source);
    });
    const pdf = this.scanPdfs?.resultFor(draft, input.file.createdAt);
    const scan = await this.history.recordScanInChunks(draft, 'IMPORT', this.stagedFindings(input, targets), {
      scan: (risks): Scan => ({
        ...draft,
        risks,
        results: pdf === undefined ? draft.results : [...draft.results, { resultId: pdf.id, contentType: pdf.contentType }],
      }),
      event: 'scan.created',
      save: (recorded, events) => (this.scans.saveWithResults(recorded, pdf === undefined ? [] : [pdf], events, draft.state) ? recorded : false),
    });
    if (scan === false) throw new ImportInterrupted(draft.id);
    this.notify(scan);
    if (pdf !== undefined) this.scanPdfs!.renderSoon({ resultId: pdf.id, scanId: scan.id, accountId: account.id });
    return { scan, source: input.source, targets, skippedHosts: input.inferred.skipped };
  }

  /**
   * The staged findings of each target, read target by target as the
   * recording reaches it. A finding belongs to the target whose file host it
   * was reported on; findings on skipped hosts belong to none. With a web
   * scanner's single given target, every finding is its own.
   */
  private stagedFindings(input: RecordInput, targets: readonly Target[]): TargetFindings {
    const idOf = new Map(targets.map((target) => [target.target, target.id]));
    const counts = this.staging.findingCounts(input.scanId);
    const given = input.inferred.targets.length === 1 && input.inferred.targets[0]!.hosts.length === 0;
    const hostsOf = new Map(input.inferred.targets.map((inferred) => [idOf.get(inferred.target)!, inferred.hosts]));
    const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
    return {
      countOf: (targetId) => (given ? total : (hostsOf.get(targetId) ?? []).reduce((sum, host) => sum + (counts.get(host) ?? 0), 0)),
      findingsOf: (targetId) => this.staging.findings(input.scanId, given ? undefined : (hostsOf.get(targetId) ?? [])),
    };
  }
}

/**
 * How many targets one transaction of an upload creates or updates: 250
 * took 64 ms on an account of 10,000 targets and a million risks
 * (bench/scale.ts), 100 stay near 25 ms, yet took 49 ms in a traced run;
 * a transaction also ends once TRANSACTION_MS have passed, as a recording's
 * chunks do.
 */
const TARGETS_PER_TRANSACTION = 100;

/** The import's Scan was deleted while it was being recorded. */
class ImportInterrupted extends InvalidRequestError {
  constructor(scanId: string) {
    super(`the import's scan ${scanId} was deleted while it was being recorded; upload the file again`);
  }
}

function* batches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

interface RecordInput {
  scanId: string;
  source: Source;
  inferred: InferredTargets;
  file: StoredResultFile;
  type: ImportableScanType;
}

function noTargetMessage(skipped: readonly SkippedHost[]): string {
  if (skipped.length === 0) return 'the file names no scanned host that is up, so there is nothing to import';
  const named = skipped.slice(0, NAMED_HOSTS).map((host) => host.reason);
  const more = skipped.length > NAMED_HOSTS ? ` (and ${skipped.length - NAMED_HOSTS} more)` : '';
  return `no host in the file can be a target: ${named.join('; ')}${more}`;
}
