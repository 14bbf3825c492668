/**
 * What a report says, from its snapshot: the counts of its summary, its
 * charts' data, and the per-target sections with each target's risks most
 * severe first. Pure, so the PDF, HTML and CSV renderers all show the same
 * numbers in the same order.
 */
import type { ThreatLevel } from '../risks/finding.js';
import type { RiskStatus } from '../risks/risk.js';
import { HEALTH_GRADES, type HealthGrade } from '../targets/health-score.js';
import { EVIDENCE_LIMITS, type WithDefinition } from './evidence.js';
import type { ReportFilters, ReportRisk, ReportSnapshot, ReportTarget } from './snapshot.js';

export { EVIDENCE_LIMITS, evidenceOf } from './evidence.js';

export interface ReportSummary {
  total: number;
  byThreatLevel: Record<ThreatLevel, number>;
  byStatus: Record<RiskStatus, number>;
  accepted: number;
  /** Scanned targets by grade; the never-scanned ones are counted in targetsNotScanned instead. */
  targetsByGrade: Record<HealthGrade, number>;
  targetsNotScanned: number;
}

export interface ReportSection {
  target: ReportTarget;
  /** Most severe first. */
  risks: ReportRisk[];
  byThreatLevel: Record<ThreatLevel, number>;
}

export interface ReportModel {
  snapshot: ReportSnapshot;
  summary: ReportSummary;
  /** Targets with at least one risk in the report: the worst first. */
  sections: ReportSection[];
  /** Every target the report covers, the worst health first (the summary's table). */
  targets: ReportTarget[];
  truncated: boolean;
}

const LEVEL_RANK: Readonly<Record<ThreatLevel, number>> = { CRITICAL: 0, HIGH: 1, MEDIUM: 2, LOW: 3, INFO: 4 };

const zeroByLevel = (): Record<ThreatLevel, number> => ({ CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 });

function cvssScore(cvss: string): number {
  const score = Number.parseFloat(cvss);
  return Number.isFinite(score) ? score : -1;
}

/** Most severe first: threat level, then CVSS score, open before closed, unaccepted before accepted, then title. */
export function bySeverity(a: ReportRisk, b: ReportRisk): number {
  return (
    LEVEL_RANK[a.definition.threat_level] - LEVEL_RANK[b.definition.threat_level] ||
    cvssScore(b.definition.cvss) - cvssScore(a.definition.cvss) ||
    (a.status === b.status ? 0 : a.status === 'OPEN' ? -1 : 1) ||
    Number(a.isAccepted) - Number(b.isAccepted) ||
    a.definition.title.localeCompare(b.definition.title) ||
    a.id.localeCompare(b.id)
  );
}

/** The worst target first: lowest health score, then the most severe risk counts, then address. */
function byHealth(a: ReportTarget, b: ReportTarget): number {
  return a.healthScore.score - b.healthScore.score || a.target.localeCompare(b.target);
}

/** The cover's note on a truncated report: matches are counted only to one past the cap, so it says "more than". */
export function truncationNote(snapshot: ReportSnapshot): string {
  return `More than ${snapshot.risks.length} risks matched the filters; this report holds the ${snapshot.risks.length} most severe. Narrow the filters to see the rest.`;
}

export function buildReportModel(snapshot: ReportSnapshot): ReportModel {
  const targets = byHealthWorstFirst(snapshot.targets);
  const summary = summaryOf(snapshot.risks, targets);
  return { snapshot, summary, sections: sectionsOf(targets, snapshot.risks), targets, truncated: snapshot.matchedRisks > snapshot.risks.length };
}

/** The targets, the worst health first (the order of the health table and of the sections). */
export function byHealthWorstFirst(targets: readonly ReportTarget[]): ReportTarget[] {
  return [...targets].sort(byHealth);
}

/** The counts of the summary tiles and charts. */
export function summaryOf(risks: readonly ReportRisk[], targets: readonly ReportTarget[]): ReportSummary {
  const summary: ReportSummary = {
    total: risks.length,
    byThreatLevel: zeroByLevel(),
    byStatus: { OPEN: 0, CLOSED: 0 },
    accepted: 0,
    targetsByGrade: Object.fromEntries(HEALTH_GRADES.map((grade) => [grade, 0])) as Record<HealthGrade, number>,
    targetsNotScanned: 0,
  };
  for (const risk of risks) {
    summary.byThreatLevel[risk.definition.threat_level]++;
    summary.byStatus[risk.status]++;
    if (risk.isAccepted) summary.accepted++;
  }
  for (const target of targets) {
    if (target.lastScannedAt === null) summary.targetsNotScanned++;
    else summary.targetsByGrade[target.healthScore.grade]++;
  }
  return summary;
}

/** One section per target that has risks, in the targets' order, each target's risks most severe first. */
export function sectionsOf(targets: readonly ReportTarget[], risks: readonly ReportRisk[]): ReportSection[] {
  const risksByTarget = new Map<string, ReportRisk[]>();
  for (const risk of risks) {
    const list = risksByTarget.get(risk.targetId) ?? [];
    list.push(risk);
    risksByTarget.set(risk.targetId, list);
  }
  const sections: ReportSection[] = [];
  for (const target of targets) {
    const targetRisks = risksByTarget.get(target.id);
    if (targetRisks === undefined) continue;
    targetRisks.sort(bySeverity);
    const byThreatLevel = zeroByLevel();
    for (const risk of targetRisks) byThreatLevel[risk.definition.threat_level]++;
    sections.push({ target, risks: targetRisks, byThreatLevel });
  }
  return sections;
}

/** The filters as lines a reader understands ("tags: prod, web"); "none" when the report holds everything. */
export function describeFilters(filters: ReportFilters): string[] {
  const lines: string[] = [];
  for (const [name, filter] of [
    ['Targets', filters.targets_filter],
    ['Risks', filters.risks_filter],
  ] as const) {
    for (const [key, values] of Object.entries(filter)) {
      if (values !== undefined && values.length > 0) lines.push(`${name} ${key}: ${values.join(', ')}`);
    }
  }
  return lines;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item !== '') : [];
}

/** CVE ids the scanner gave (additional_info.cves). */
export function cvesOf(risk: WithDefinition): string[] {
  return strings(risk.definition.additional_info['cves']);
}

/** References the scanner gave (additional_info.references), at most EVIDENCE_LIMITS.maxReferences. */
export function referencesOf(risk: WithDefinition): string[] {
  return strings(risk.definition.additional_info['references']).slice(0, EVIDENCE_LIMITS.maxReferences);
}

/** "CRITICAL 9.8" style: the CVSS as given, or "n/a". */
export function cvssText(risk: ReportRisk): string {
  return risk.definition.cvss === '' ? 'n/a' : risk.definition.cvss;
}
