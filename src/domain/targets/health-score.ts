/**
 * A target's health score from its open, unaccepted risks. Weights are
 * chosen so that one critical risk alone drops a target to C, one high to
 * B, and informational findings (open ports, banners) cost nothing.
 */
import type { ThreatLevel } from '../risks/finding.js';

export const HEALTH_GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
export type HealthGrade = (typeof HEALTH_GRADES)[number];

export interface HealthScore {
  score: number;
  grade: HealthGrade;
}

const THREAT_PENALTY: Readonly<Record<ThreatLevel, number>> = {
  CRITICAL: 40,
  HIGH: 20,
  MEDIUM: 7,
  LOW: 2,
  INFO: 0,
};

const GRADE_FLOORS: ReadonlyArray<[number, HealthGrade]> = [
  [90, 'A'],
  [75, 'B'],
  [50, 'C'],
  [25, 'D'],
  [0, 'F'],
];

export type OpenRiskCounts = Partial<Record<ThreatLevel, number>>;

export function healthScore(openRisks: OpenRiskCounts): HealthScore {
  let penalty = 0;
  for (const [level, count] of Object.entries(openRisks) as Array<[ThreatLevel, number]>) {
    penalty += THREAT_PENALTY[level] * count;
  }
  const score = Math.max(0, 100 - penalty);
  const grade = GRADE_FLOORS.find(([floor]) => score >= floor)![1];
  return { score, grade };
}

export const PERFECT_HEALTH: HealthScore = healthScore({});

/** What a reader sees of a target's health: "not scanned yet" until a scan has looked at it, not a perfect score. */
export function healthText(health: HealthScore, lastScannedAt: string | null | undefined): string {
  return lastScannedAt === null ? NOT_SCANNED_YET : `${health.score}, grade ${health.grade}`;
}

export const NOT_SCANNED_YET = 'not scanned yet';

/** Targets counted by grade, those no scan has looked at yet apart: their score of 100 is nobody's measurement, so they are not grade A. */
export interface GradeCounts {
  byGrade: Partial<Record<HealthGrade, number>>;
  notScanned: number;
}
