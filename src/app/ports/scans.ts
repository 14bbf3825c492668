import type { FindingSink, ScanType } from '../../domain/risks/finding.js';
import type { StagedFinding } from '../../domain/risks/risk.js';
import type { OutboxEvent } from '../../domain/events/event.js';
import type { Filters } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Scan, ScanState, ScanSummary } from '../../domain/scans/scan.js';
import type { Readable } from 'node:stream';
import type { Page } from './lists.js';
import type { Target } from '../../domain/targets/target.js';
import type { NewResultFile, StoredResultFile, RecordingKind, PendingRecording } from '../../domain/scans/result-file.js';
export type { NewResultFile, StoredResultFile, RecordingKind, PendingRecording } from '../../domain/scans/result-file.js';

export const SCAN_FILTER_KEYS = ['state', 'type', 'scheduled_by'] as const;
export type ScanFilterKey = (typeof SCAN_FILTER_KEYS)[number];

export interface ScanListQuery {
  filters: Filters<ScanFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
  /**
   * For a page that sends whole scans, risk lists and all: it ends at the
   * scan whose estimated size (`sizeOf`: its risk ids, and the characters of
   * its stored targets and conditions) takes the page's sum past `chars`,
   * that scan included (the caller measures its own rendering and may end
   * the page before it). Only the page's scans are read whole; the rest of
   * the page size is walked by key.
   */
  budget?: { chars: number; sizeOf(scan: { riskIds: number; storedChars: number }): number };
}

/**
 * Where Scan objects live in the embedded runtime. Every write that changes
 * what the API shows also records its events, in the same transaction.
 */
export interface ScanRepository {
  /** Inserts scans with their events, adding the non-OVER_LIMIT ones to the month's usage, in one transaction. */
  insert(scans: readonly Scan[], events: readonly OutboxEvent[]): void;
  /** Inserts a Scan that ran elsewhere (an uploaded result) with its result files; it does not count against the monthly usage. */
  insertImported(scan: Scan, files: readonly StoredResultFile[]): void;
  findById(accountId: string, id: string): Scan | undefined;
  /** The scan without reading its risk lists (their lengths only). */
  findSummary(accountId: string, id: string): ScanSummary | undefined;
  findByName(accountId: string, name: string): Scan | undefined;
  /** For the controller, which reconciles by id across accounts. */
  findByIdUnscoped(id: string): Scan | undefined;
  /**
   * Writes the scan's mutable fields and its events; returns false when the
   * row is gone or, with `expectedState`, when its state changed meanwhile
   * (a compare-and-set, so a stop request is never overwritten). The risk
   * lists are not written: they are recorded by insert, insertImported and
   * saveWithResults, the writes that record what a scan found.
   */
  save(scan: Scan, events: readonly OutboxEvent[], expectedState?: ScanState): boolean;
  /**
   * Deletes the scan, remembers it was deleted (ScanResourceMarks.deletedThroughApi) and journals its
   * detections and risk lists for the sweep (ScanSweeps), in one transaction.
   */
  delete(accountId: string, id: string): boolean;
  /** A page of the account's scans, newest first, their risk lists counted and not read. */
  list(accountId: string, query: ScanListQuery): Page<ScanSummary>;
  /**
   * `count` entries of one of the scan's risk lists from `position` (0-based,
   * in recorded order) as the API's JSON, `{"risk_id":"…"}` joined by commas;
   * fewer when the list is shorter (or the scan is gone).
   */
  riskListJson(scanId: string, list: keyof Scan['risks'], position: number, count: number): string;
  /** The same run of one of the scan's risk lists as ids. */
  riskListIds(scanId: string, list: keyof Scan['risks'], position: number, count: number): string[];
  /** Ids of scans in the states, oldest first, at most `limit` of them. */
  idsInStates(states: readonly ScanState[], limit?: number): string[];
  countInState(state: ScanState): number;
  /** Scans started in the month (YYYY-MM, UTC) that count against the monthly limit; deleting a scan does not lower it. */
  monthlyUsage(accountId: string, month: string): number;
  /** Records the scan's result files and risk lists together with its new state and events, in one transaction. */
  saveWithResults(scan: Scan, files: readonly NewResultFile[], events: readonly OutboxEvent[], expectedState: ScanState): boolean;
  findResult(accountId: string, id: string): StoredResultFile | undefined;
  /** The bytes of a result kept in its row (NewResultFile.content); undefined when the file is on disk. The caller has checked the account. */
  resultContent(id: string): Uint8Array | undefined;
  eventsFor(accountId: string): OutboxEvent[];
}

/**
 * What Vigil knows of a Scan's custom resource beyond its record
 * (Kubernetes runtime), so that a record missing never destroys anything.
 */
export interface ScanResourceMarks {
  /** The Scan or ScheduledScan of this id was deleted through the API: its resource goes too. */
  deletedThroughApi(recordId: string): boolean;
  /** Its resource is gone: nothing is owed any more. */
  forgetDeletion(recordId: string): void;
  /** Vigil deletes the resource of a finished scan on purpose (ttlSecondsAfterFinished, a schedule's history limits): not created again, its record kept. */
  markExpired(scanId: string, at: string): void;
  isExpired(scanId: string): boolean;
  /** A schedule's finished Scans whose resources Vigil has not expired, newest first (its history limits). */
  finishedWithResources(scheduledScanId: string): FinishedScan[];
}

/** A (target, scan type) pair whose risks a deleted scan left to recompute (PendingForgets). */
export interface PendingForget {
  seq: number;
  accountId: string;
  targetId: string;
  scanType: ScanType;
}

/**
 * The recompute a scan's deletion leaves, journaled in the transaction that
 * deletes it and done in chunks (RiskHistory.forgetDeletedScan); what is
 * left at start-up was cut short by a crash and is finished then.
 */
export interface PendingForgets {
  add(scanId: string, accountId: string, pairs: ReadonlyArray<{ targetId: string; scanType: ScanType }>): void;
  /** The scan's first `limit` pairs still to recompute, in the order they were added. */
  next(scanId: string, limit: number): PendingForget[];
  remove(seqs: readonly number[]): void;
  /** The scans whose recompute is not finished, oldest first. */
  scans(): string[];
}

/**
 * A deleted scan's detections and risk lists, which outlive its row (no
 * cascade: a large scan's held the event loop): the scan repository's
 * delete journals them, and they are swept a chunk per transaction
 * (RiskHistory.forgetDeletedScan); what is left at start-up was cut short
 * by a crash and is swept then.
 */
export interface ScanSweeps {
  /** Deletes at most `limit` of the scan's rows; when none was left, takes the scan off the journal and returns false. */
  sweep(scanId: string, limit: number): boolean;
  /** The scans whose rows are not all swept, oldest first. */
  scans(): string[];
}

export interface FinishedScan {
  id: string;
  name: string;
  state: ScanState;
}

/** Risk recordings in several transactions; what is left at start-up was cut short by a crash. */
export interface PendingRecordings {
  begin(scanId: string, accountId: string, kind: RecordingKind, at: string): void;
  /** The recording is done or rolled back: its marker and its journal of targets go. */
  end(scanId: string): void;
  list(): PendingRecording[];
  /**
   * Journals a target the recording creates (`before` undefined) or changes,
   * in the transaction of the change: the first before-image of each target
   * is kept, and the values the recording last wrote.
   */
  noteTarget(scanId: string, before: Target | undefined, after: Target): void;
  /**
   * Undoes what the recording did to the targets it changed: each field it
   * wrote (os, hostname, last_scanned_at) that still holds what it wrote
   * gets its before-image back. Returns the targets it created that no scan
   * covers (call after its own coverage is forgotten), for the caller to delete.
   */
  restoreTargets(scanId: string): string[];
}

/**
 * What a large recording has in hand before it is done, kept in the store
 * instead of in memory (issue 17: an upload's memory must not grow with its
 * findings): an upload's findings as they are parsed, and the events of a
 * chunked recording until its last transaction. Nothing staged outlives the
 * process: a crash leaves none of it, a finished or refused recording
 * drops its own.
 */
export interface RecordingStaging {
  /**
   * Where a recording's findings are handed as they come: an upload's parser
   * stages each under its file host; a finished scan's go under the `key`
   * given (its target id).
   */
  findingSink(scanId: string, key?: string): FindingSink;
  /** How many staged findings each file host (or key) has. */
  findingCounts(scanId: string): Map<string, number>;
  /** The order and fingerprints of the staged findings of these file hosts or keys (every one when `hosts` is undefined), in the order they were staged. */
  findings(scanId: string, hosts: readonly string[] | undefined): StagedFinding[];
  /**
   * Keeps a recording's risk events until it is done (in the caller's
   * transaction), one per [risk id, event id, type], in that order; each
   * event's data is its risk as the API presents it now.
   */
  stageRiskEvents(scanId: string, createdAt: string, events: ReadonlyArray<readonly [riskId: string, eventId: string, type: string]>): void;
  /**
   * A chunked recording's risk events (under its pending marker, in the
   * chunk's transaction): written to the outbox at once, marked as its, and
   * held back from delivery until the marker ends (PendingRecordings.end, in
   * the recording's last transaction), so the last transaction does not move
   * them all. Each event's data is its risk as the API presents it now.
   */
  holdRiskEvents(scanId: string, createdAt: string, events: ReadonlyArray<readonly [riskId: string, eventId: string, type: string]>): void;
  /**
   * A chunked recording's scan event, held as its risk events are: its row
   * now (in the caller's transaction), its data in parts later
   * (addEventPart), so that no one transaction writes all of a large scan's
   * risk ids. Its seq, or undefined when no webhook endpoint of the account
   * would receive it (nothing stored).
   */
  holdEvent(scanId: string, event: Omit<OutboxEvent, 'data'>): number | undefined;
  /** The next part of a held event's data as JSON text (its data is its parts in the order added). */
  addEventPart(seq: number, text: string): void;
  /** Deletes the events a recording still pending holds (its rollback, before its marker ends). */
  discardHeldEvents(accountId: string, scanId: string): void;
  /** Moves the staged events into the outbox, in the order staged (in the recording's last transaction). */
  releaseEvents(scanId: string): void;
  /** Forgets everything staged for the recording. */
  drop(scanId: string): void;
  /**
   * drop() a piece at a time (dropStaged): its events and up to `limit` of
   * its findings; false once none was left.
   */
  dropSome(scanId: string, limit: number): boolean;
}

/**
 * One result file written to its place as its pieces arrive (an upload), under
 * a temporary name in its scan's folder until commit() syncs it and renames it
 * to its final name; discard() removes it. Nothing of it is kept in memory.
 */
export interface IncomingResultFile {
  /** Appends the piece to the file; synchronous, so the file is never behind what the caller has handed on. */
  write(chunk: Uint8Array): void;
  /** The bytes written so far, read back in pieces. */
  written(): Iterable<Uint8Array>;
  /** Syncs the file to disk and renames it to `fileName` in its scan's folder. */
  commit(fileName: string): Promise<{ size: number; sha256: string }>;
  /** Removes the file, and its scan's folder when nothing else is in it (a refused or failed upload leaves nothing behind). */
  discard(): Promise<void>;
}

/** Where raw scanner output files live (the data directory, in both runtimes). */
export interface ResultFileStore {
  /**
   * A file of the scan written as it arrives (see IncomingResultFile), under
   * '<scan id>/<name>.partial' until committed; `name` defaults to 'upload'.
   */
  incoming(scanId: string, name?: string): IncomingResultFile;
  /**
   * `content` is the file's bytes, its pieces in order, or a stream of pieces
   * (written one after another as they come, never joined in memory).
   */
  save(scanId: string, fileName: string, content: Uint8Array | readonly Uint8Array[] | AsyncIterable<Uint8Array>): Promise<{ size: number; sha256: string }>;
  open(scanId: string, fileName: string): Readable;
  /** The file's size in bytes, or undefined when it does not exist. */
  sizeOf(scanId: string, fileName: string): Promise<number | undefined>;
  /** The whole file, or undefined when it does not exist. */
  read(scanId: string, fileName: string): Promise<Uint8Array | undefined>;
  removeScan(scanId: string): Promise<void>;
}
