import { Buffer } from 'node:buffer';
import { THREAT_LEVELS, type Finding, type ThreatLevel } from '../../domain/risks/finding.js';

/**
 * Findings that share a fingerprint and a location within one file are one
 * Risk (DESIGN.md decision 7), so they are folded into the first occurrence
 * with `combine`; the result keeps file order. The port and protocol are part
 * of the key because one host name can carry several services.
 */
export function mergeFindingsWithSameIdentity(findings: readonly Finding[], combine: (kept: Finding, duplicate: Finding) => Finding): Finding[] {
  const merger = new FindingMerger(combine);
  for (const finding of findings) merger.add(finding);
  return merger.findings();
}

/** mergeFindingsWithSameIdentity one finding at a time, for a parser that streams: `size` is the number of distinct findings so far. */
export class FindingMerger {
  private readonly byIdentity = new Map<string, Finding>();

  constructor(private readonly combine: (kept: Finding, duplicate: Finding) => Finding) {}

  add(finding: Finding): void {
    const key = identityKey(finding);
    const kept = this.byIdentity.get(key);
    this.byIdentity.set(key, kept ? this.combine(kept, finding) : finding);
  }

  get size(): number {
    return this.byIdentity.size;
  }

  findings(): Finding[] {
    return [...this.byIdentity.values()];
  }
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
  return detached(`${value.slice(0, end)}…`);
}

/**
 * The same text in a string of its own. V8 makes a slice of a long string
 * point into it (and a concatenation point to its parts), so the first 500
 * characters of a 1.4 MB ZAP evidence string kept in a finding would keep
 * all 1.4 MB alive while the parser holds its findings: 12.7 MB of a 25 MB
 * report's upload peak (bench/ingest.ts). UTF-16 in and out, so every code
 * unit, a lone surrogate included, is kept as it is.
 */
export function detached(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}
