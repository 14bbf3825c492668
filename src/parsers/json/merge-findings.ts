import { THREAT_LEVELS, type Finding, type ThreatLevel } from '../../domain/risks/finding.js';

/**
 * Findings that share a fingerprint and a location within one file are one
 * Risk (DESIGN.md decision 7), so they are folded into the first occurrence
 * with `combine`; the result keeps file order. The port and protocol are part
 * of the key because one host name can carry several services.
 */
export function mergeFindingsWithSameIdentity(
  findings: readonly Finding[],
  combine: (kept: Finding, duplicate: Finding) => Finding,
): Finding[] {
  const byIdentity = new Map<string, Finding>();
  for (const finding of findings) {
    const key = identityKey(finding);
    const kept = byIdentity.get(key);
    byIdentity.set(key, kept ? combine(kept, finding) : finding);
  }
  return [...byIdentity.values()];
}

function identityKey(finding: Finding): string {
  const { host, port, protocol } = finding.location;
  return JSON.stringify([finding.fingerprint, host.toLowerCase(), port ?? null, protocol ?? null]);
}

/** The more severe of two levels. */
export function mostSevere(a: ThreatLevel, b: ThreatLevel): ThreatLevel {
  return THREAT_LEVELS.indexOf(a) <= THREAT_LEVELS.indexOf(b) ? a : b;
}

/** Keeps evidence lists bounded: at most `max` items, each string at most `maxChars` long. */
export function capStrings(values: readonly string[], max: number, maxChars: number): string[] {
  return values.slice(0, max).map((value) => capText(value, maxChars));
}

export function capText(value: string, maxChars: number): string {
  if (value.length <= maxChars) return value;
  let end = maxChars - 1;
  // Do not cut a surrogate pair in half: a lone surrogate is not valid UTF-8 when stored.
  if (/[\uD800-\uDBFF]/.test(value.charAt(end - 1))) end--;
  return `${value.slice(0, end)}…`;
}
