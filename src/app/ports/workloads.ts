import type { OutboxEvent } from '../../domain/events/event.js';
import type { LoginRecording } from '../../domain/targets/login-recording.js';
import type { ResolvedTarget, Scan } from '../../domain/scans/scan.js';

export type WorkloadPhase = 'Running' | 'Succeeded' | 'Failed' | 'Missing';

export interface WorkloadOutput {
  file: string;
  contentType: string;
  /**
   * The file's bytes in memory, or a function that reads them in pieces from
   * where the runner left the file (an uploaded or written result file, up to
   * VIGIL_RESULT_FILE_MAX_MB), so that a large file is never held whole.
   */
  content: Uint8Array | (() => AsyncIterable<Uint8Array>);
}

export interface WorkloadStatus {
  phase: WorkloadPhase;
  /** The scanner's latest progress report, 0..100, when it reports one. */
  progress?: number;
  /** Failed: a CamelCase reason and a sentence saying what happened and what to do. */
  reason?: string;
  message?: string;
  /** Succeeded: the files the scanner wrote. */
  outputs?: WorkloadOutput[];
  /** Succeeded: what the scanner ran with that shapes its findings (nuclei's templates version), for the Scan's condition. */
  detail?: string;
  /** Running: look again after this long even without a change notice (a grace period that ends). */
  recheckAfterMs?: number;
}

/**
 * Thrown by WorkloadRunner.start when the platform refuses the workload for a
 * reason no retry can fix (the service may not write where the Scan must run):
 * the Scan fails with this reason and message instead of being retried.
 */
export class WorkloadRefusedError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where scanner workloads run: child processes in the embedded runtime,
 * Jobs on Kubernetes. Start is idempotent; a workload the runner does not
 * know (lost in a restart) is Missing.
 */
export interface WorkloadRunner {
  /** Starts the scanner on the resolved targets, which it reaches at their checked addresses only. */
  start(scan: Scan, targets: readonly ResolvedTarget[], inputs?: WorkloadInputs): Promise<void>;
  observe(scanId: string): Promise<WorkloadStatus>;
  stop(scanId: string): Promise<void>;
  /** Frees what the workload left behind once its outputs are stored; `deleted` when stop() removed the workload or deleteCollectedWorkload will. */
  release(scanId: string, workload: ReleasedWorkload): Promise<void>;
  /**
   * After release of a workload whose results are recorded: deletes what
   * had to outlive an outage of the service for them to be collected (a
   * Kubernetes Job; nothing in the embedded runtime).
   */
  deleteCollectedWorkload(scanId: string): Promise<void>;
  /** Tells the controller that a workload changed (progress, exit) so it reconciles without waiting for a poll. */
  onChange(listener: (scanId: string) => void): void;
}

/**
 * What becomes of an ended workload: `kept` (failed or missing: a Kubernetes
 * Job stays, so release deletes its inputs itself) or `deleted` (stopped, or
 * collected: a Kubernetes Job's deletion takes its Secret).
 */
export type ReleasedWorkload = 'kept' | 'deleted';

/** WorkloadStatus.reason of a workload whose login step failed (Kubernetes): its target is skipped as Authentication Failed. */
export const LOGIN_FAILED_REASON = 'LoginFailed';

/** What a web scan's workload takes besides its targets (WebScanPreparer): none for the other types. */
export interface WorkloadInputs {
  /** The target's scanner_settings.zap. */
  settings?: unknown;
  /** The checked addresses of the host names those settings send ZAP to, pinned as the target's host is. */
  settingsHostAddresses?: Record<string, string[]>;
  /** Embedded runtime: the session the login replay left, for ZAP's plan. */
  session?: LoginSession;
  /** Kubernetes: the login recording the Job replays before ZAP starts. */
  loginRecording?: { fileName: string; content: Buffer };
  /** The target's API definition, for ZAP's openapi job. */
  apiDefinition?: { fileName: string; content: Buffer };
}

/** What a replayed login leaves behind for the scanner: the browser's cookies for the target, and an Authorization header if the application sent one. */
export interface LoginSession {
  cookies: Array<{ name: string; value: string; domain: string; path: string }>;
  authorization?: string;
}

export type LoginOutcome = { ok: true; session: LoginSession } | { ok: false; message: string };

/** Replays a login recording in a real browser, confined to the scanning address rules (runtime/login-replay). */
export interface LoginReplayer {
  replay(recording: LoginRecording, targetUrl: string): Promise<LoginOutcome>;
}

/** DNS, as the controller needs it: the IPv4 addresses of a host name. */
export interface HostResolver {
  resolve4(host: string): Promise<string[]>;
}

export interface UploadTokenRepository {
  save(scanId: string, hash: Buffer, createdAt: string): void;
  find(scanId: string): Buffer | undefined;
  /** The scan ended: its token opens nothing any more. */
  revoke(scanId: string): void;
}

/** The transactional outbox (DESIGN.md 8): events written in the caller's transaction. */
export interface EventOutbox {
  append(events: readonly OutboxEvent[]): void;
}

/**
 * Whether an event has a receiver: events exist only to be delivered to the
 * account's webhook endpoints, each of which receives the events that happen
 * after it is registered. The outbox stores no event without one.
 */
export interface EventReceivers {
  /** Whether an event of the account made at `at` (or later) would be delivered anywhere. */
  receivesEvents(accountId: string, at: Date): boolean;
}
