import type { ThreatLevel } from '../../domain/risks/finding.js';

/**
 * CVSS v3 qualitative severity rating (FIRST CVSS v3.1 specification, section 5):
 * 9.0-10.0 critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low, 0.0 none.
 * Applied to every scanner score, v2 ones included, so that one scale ranks all findings.
 */
export function threatLevelFromCvssScore(score: number): ThreatLevel {
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MEDIUM';
  if (score > 0) return 'LOW';
  return 'INFO';
}

/** A CVSS base score read from scanner text ("9.8", " 5.0 "); undefined when absent or not a number in 0-10. */
export function parseCvssScore(text: string | undefined): number | undefined {
  const trimmed = text?.trim() ?? '';
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return undefined;
  const score = Number(trimmed);
  return score <= 10 ? score : undefined;
}
