/**
 * The Scan resource and its state machine (SPEC.md, Scan; DESIGN.md).
 * The same shape backs a row in the embedded runtime and a custom resource
 * on Kubernetes.
 */
import type { ScanType } from '../risks/finding.js';

export const SCAN_STATES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'STOPPING', 'STOPPED', 'FAILED', 'OVER_LIMIT'] as const;
export type ScanState = (typeof SCAN_STATES)[number];

const TERMINAL_STATES: ReadonlySet<ScanState> = new Set(['SUCCEEDED', 'STOPPED', 'FAILED', 'OVER_LIMIT']);

export function isTerminal(state: ScanState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Targets one Scan may hold, by type; larger requests are split (SPEC.md, Limits). */
export const TARGETS_PER_SCAN: Readonly<Record<ScanType, number>> = {
  OWASP_ZAP: 1,
  OWASP_ZAP_ACTIVE: 1,
  SSLYZE: 10,
  NUCLEI: 10,
  NMAP: 100,
  NMAP_UDP: 100,
  OPENVAS: 100,
  NESSUS: 100,
};

/** The two types that replay a login recording and default to authenticated scanning. */
export const WEB_SCAN_TYPES: ReadonlySet<ScanType> = new Set(['OWASP_ZAP', 'OWASP_ZAP_ACTIVE']);

export interface RequestedTarget {
  targetId: string;
  target: string;
}

export interface ResolvedTarget {
  targetId: string;
  target: string;
  /** The public IPv4 addresses the target's host resolved to when the Scan started. */
  addresses: string[];
}

export interface SkippedTarget {
  targetId: string;
  skippedReason: string;
}

/** Kubernetes-style condition: why the Scan is in its state. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface ResultFile {
  resultId: string;
  contentType: string;
}

export interface Scan {
  id: string;
  accountId: string;
  /** Object name: the CR name on Kubernetes, deterministic for scheduled runs. */
  name: string;
  type: ScanType;
  state: ScanState;
  /** 0..100, never decreasing. */
  progress: number;
  isAuthenticated: boolean;
  requestedTargets: RequestedTarget[];
  resolvedTargets: ResolvedTarget[];
  skippedTargets: SkippedTarget[];
  conditions: Condition[];
  results: ResultFile[];
  risks: { newOpen: string[]; stillOpen: string[]; closed: string[] };
  scheduledBy: string | null;
  reportId: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** How many risk ids each of a scan's lists holds. */
export interface RiskListCounts {
  newOpen: number;
  stillOpen: number;
  closed: number;
}

/**
 * A scan as lists show it: every field but its risk lists, which are
 * counted. A list of an account's scans can hold a million risk ids; it
 * reads a scan's lists only to send them (ScansService.listJson).
 */
export type ScanSummary = Omit<Scan, 'risks'> & { riskCounts: RiskListCounts };

/** Splits targets into chunks of the type's per-Scan limit, keeping their order. */
export function splitTargets<T>(type: ScanType, targets: readonly T[]): T[][] {
  const size = TARGETS_PER_SCAN[type];
  const chunks: T[][] = [];
  for (let index = 0; index < targets.length; index += size) chunks.push(targets.slice(index, index + size));
  return chunks;
}

/** Progress only moves forward and stays within 0..100. */
export function advanceProgress(current: number, reported: number): number {
  if (!Number.isFinite(reported)) return current;
  return Math.max(current, Math.min(100, Math.max(0, Math.floor(reported))));
}
