/**
 * Uploading scanner results (SPEC.md, Imported results). An upload becomes a
 * SUCCEEDED Scan of its targets that feeds the same risk history as scans
 * Vigil runs. Everything is checked and parsed first; then the result file
 * is stored and the targets, the Scan, its risks and every event are written
 * in one transaction, so a refused upload leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { presentScan } from '../api/present/scan.js';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import { newEvent } from '../domain/events/event.js';
import { newImportScan } from '../domain/imports/import-scan.js';
import {
  MAX_IMPORT_FILE_BYTES,
  MAX_IMPORTED_TARGETS,
  storedResultFile,
  targetsComeFromFile,
  type ImportableScanType,
} from '../domain/imports/importable.js';
import { findingsByTarget, givenTarget, inferTargets, type InferredTargets, type SkippedHost } from '../domain/imports/inferred-targets.js';
import type { Finding } from '../domain/risks/finding.js';
import type { Scan } from '../domain/scans/scan.js';
import type { Source } from '../domain/sources/source.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import type { Target } from '../domain/targets/target.js';
import type { ResultFileStore, ScanRepository, StoredResultFile } from './ports.js';
import { ResultUpload, type ParsedUpload } from './result-upload.js';
import type { RiskHistory } from './risk-history.js';
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
  constructor(
    private readonly sources: SourcesService,
    private readonly targets: TargetsService,
    private readonly scans: ScanRepository,
    private readonly resultFiles: ResultFileStore,
    private readonly history: RiskHistory,
    private readonly clock: Clock,
    private readonly allowTargets: readonly Cidr[],
  ) {}

  newUpload(): ResultUpload {
    return new ResultUpload(MAX_IMPORT_FILE_BYTES);
  }

  /** Checks a form field as it arrives, so that a bad upload is refused before its file is read. */
  checkField(account: Account, upload: ResultUpload, name: string, value: string): void {
    if (name === 'scan_type') upload.useScanType(value);
    if (name === 'source_id') this.sources.importedSource(account, value);
  }

  async importResult(account: Account, request: ImportRequest, upload: ParsedUpload): Promise<ImportedResult> {
    const source = this.sources.importedSource(account, request.source_id);
    const inferred = this.inferTargets(request, upload);
    for (const target of inferred.targets) this.targets.assertUploadable(account, target.target);
    const scanId = randomUUID();
    const file = await this.storeFile(account, scanId, upload);
    try {
      return this.record(account, { scanId, source, inferred, file, findings: upload.result.findings, type: upload.scanType });
    } catch (error) {
      await this.resultFiles.removeScan(scanId);
      throw error;
    }
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
    const { size, sha256 } = await this.resultFiles.save(scanId, fileName, upload.content);
    return { id: randomUUID(), scanId, accountId: account.id, fileName, contentType, size, sha256, createdAt: this.clock.now().toISOString() };
  }

  private record(account: Account, input: RecordInput): ImportedResult {
    return this.history.transaction(() => {
      const targets = input.inferred.targets.map((inferred) => this.targets.recordUploaded(account, inferred.target, inferred));
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
      this.scans.insertImported(draft, [input.file]);
      this.sources.linkScan(draft.id, input.source);
      const { risks, events } = this.history.recordScan(draft, findingsById(input, targets));
      const scan: Scan = { ...draft, risks };
      this.scans.save(scan, [newEvent(account.id, 'scan.created', presentScan(scan), this.clock.now()), ...events]);
      return { scan, source: input.source, targets, skippedHosts: input.inferred.skipped };
    });
  }
}

interface RecordInput {
  scanId: string;
  source: Source;
  inferred: InferredTargets;
  file: StoredResultFile;
  findings: readonly Finding[];
  type: ImportableScanType;
}

/** The findings of each target, keyed by target id as the risk history wants them. */
function findingsById(input: RecordInput, targets: readonly Target[]): Map<string, Finding[]> {
  const idOf = new Map(targets.map((target) => [target.target, target.id]));
  const byAddress = findingsByTarget(input.inferred.targets, input.findings);
  return new Map([...byAddress].map(([address, findings]) => [idOf.get(address)!, findings]));
}

function noTargetMessage(skipped: readonly SkippedHost[]): string {
  if (skipped.length === 0) return 'the file names no scanned host that is up, so there is nothing to import';
  const named = skipped.slice(0, NAMED_HOSTS).map((host) => host.reason);
  const more = skipped.length > NAMED_HOSTS ? ` (and ${skipped.length - NAMED_HOSTS} more)` : '';
  return `no host in the file can be a target: ${named.join('; ')}${more}`;
}
