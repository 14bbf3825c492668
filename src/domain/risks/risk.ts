/** A Risk: one finding on one Target for one scan type, tracked across scans (SPEC.md, Risk; DESIGN.md 7). */
import type { RiskDefinition, ScanType } from './finding.js';

export type RiskStatus = 'OPEN' | 'CLOSED';

/** The longest note an acceptance may carry. */
export const MAX_ACCEPT_NOTE_LENGTH = 1000;

export interface Acceptance {
  note: string;
  created_at: string;
  last_updated_at: string;
}

export interface Risk {
  id: string;
  accountId: string;
  targetId: string;
  scanType: ScanType;
  fingerprint: string;
  status: RiskStatus;
  firstDetectedAt: string;
  lastDetectedAt: string;
  isAccepted: boolean;
  acceptedBy: Acceptance[];
  definition: RiskDefinition;
  createdAt: string;
}

/** A risk as lists and events show it: with its target's address, label and tags at read time. */
export interface RiskView extends Risk {
  target: string;
  targetLabel: string;
  tags: string[];
}

/** One scan's look at one target for one type: what it found there. */
export interface Coverage {
  scanId: string;
  coveredAt: string;
  fingerprints: ReadonlySet<string>;
}

export interface RiskHistory {
  status: RiskStatus;
  firstDetectedAt: string;
  lastDetectedAt: string;
}

/**
 * A risk's history from the scans that covered its target and type, oldest
 * first (DESIGN.md 7: deleting a Scan recomputes from what remains). A risk
 * no remaining scan detected has no history: undefined, and it goes away.
 * It is OPEN when the latest covering scan since its first detection found
 * it, CLOSED otherwise.
 */
export function historyOf(fingerprint: string, coverage: readonly Coverage[]): RiskHistory | undefined {
  const detections = coverage.filter((entry) => entry.fingerprints.has(fingerprint));
  if (detections.length === 0) return undefined;
  const latest = coverage.at(-1)!;
  return {
    status: latest.fingerprints.has(fingerprint) ? 'OPEN' : 'CLOSED',
    firstDetectedAt: detections[0]!.coveredAt,
    lastDetectedAt: detections.at(-1)!.coveredAt,
  };
}

export interface ExistingRisk {
  id: string;
  fingerprint: string;
  status: RiskStatus;
}

/**
 * A finding a recording holds in the store's staging rather than in memory:
 * its place in the order it was reported (seq) and its fingerprint, all the
 * history needs to decide what it is; the store copies the rest (the
 * definition) into the risk it becomes.
 */
export interface StagedFinding {
  seq: number;
  fingerprint: string;
}

export interface ScanDiff {
  /** Fingerprints seen for the first time on this target and type. */
  newFingerprints: string[];
  /** Existing risks detected again, the re-opened ones included (SPEC.md still_open). */
  stillOpen: ExistingRisk[];
  /** OPEN risks this scan of the target did not detect. */
  closed: ExistingRisk[];
}

/** SPEC.md's categories for one scan of one target and type. */
export function diffScan(existing: readonly ExistingRisk[], detected: ReadonlySet<string>): ScanDiff {
  const known = new Map(existing.map((risk) => [risk.fingerprint, risk]));
  return {
    newFingerprints: [...detected].filter((fingerprint) => !known.has(fingerprint)),
    stillOpen: existing.filter((risk) => detected.has(risk.fingerprint)),
    closed: existing.filter((risk) => risk.status === 'OPEN' && !detected.has(risk.fingerprint)),
  };
}
