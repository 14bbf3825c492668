/**
 * Risks for report tests, seeded straight into the store (as
 * test/http/risks.test.ts does: real scans are slow), with the hostile text
 * a report must survive: markup, formula prefixes, commas, quotes and line
 * breaks, and characters the PDF's standard fonts do not carry.
 */
import { randomUUID } from 'node:crypto';
import type { ScanType, ThreatLevel } from '../../src/domain/risks/finding.js';
import type { Risk, RiskStatus } from '../../src/domain/risks/risk.js';
import type { Database } from '../../src/store/database.js';
import { healthScore } from '../../src/domain/targets/health-score.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';

export const HOSTILE = {
  title: '<script>alert("title")</script> Reflected XSS in /search',
  description: 'Line one, with a comma and a "quote".\nLine two: =HYPERLINK("https://evil.example/x","click") <img src=x onerror=alert(1)>',
  solution: '=1+1',
  plusCell: '+SUM(A1:A2)',
  minusCell: '-2+3',
  atCell: '@cmd',
  tabCell: '\tleading tab',
  crCell: '\rleading carriage return',
  label: '<b>Shop</b> & "Co", Zürich 東京',
  reference: 'javascript:alert(document.cookie)',
  externalImage: '<img src="https://evil.example/pixel.png">',
} as const;

export interface SeedRisk {
  targetId: string;
  accountId: string;
  title?: string;
  threatLevel?: ThreatLevel;
  status?: RiskStatus;
  scanType?: ScanType;
  cvss?: string;
  accepted?: boolean;
  description?: string;
  solution?: string;
  additionalInfo?: Record<string, unknown>;
}

let counter = 0;

export function riskOf(seed: SeedRisk): Risk {
  counter++;
  const at = new Date(Date.parse('2026-03-01T08:00:00.000Z') + counter * 60_000).toISOString();
  const scanType = seed.scanType ?? 'NUCLEI';
  const title = seed.title ?? `Finding ${counter}`;
  return {
    id: randomUUID(),
    accountId: seed.accountId,
    targetId: seed.targetId,
    scanType,
    fingerprint: `report-test:${counter}`,
    status: seed.status ?? 'OPEN',
    firstDetectedAt: at,
    lastDetectedAt: at,
    isAccepted: seed.accepted ?? false,
    acceptedBy: seed.accepted ? [{ note: 'by design', created_at: at, last_updated_at: at }] : [],
    definition: {
      scan_type: scanType,
      title,
      threat_level: seed.threatLevel ?? 'MEDIUM',
      description: seed.description ?? `${title} was detected on the target.`,
      solution: seed.solution ?? 'Apply the vendor patch.',
      cvss: seed.cvss ?? '',
      additional_info: seed.additionalInfo ?? { template_id: `tpl-${counter}`, cves: ['CVE-2024-0001'], references: ['https://example.com/advisory'] },
    },
    createdAt: at,
  };
}

/** Inserts the risks in one transaction and updates their targets' health scores, as a scan would. */
export function seedRisks(db: Database, seeds: readonly SeedRisk[]): Risk[] {
  const repository = new SqliteRiskRepository(db);
  const targets = new SqliteTargetRepository(db);
  const risks = seeds.map(riskOf);
  db.transaction(() => {
    risks.forEach((risk) => repository.insert(risk));
    for (const seed of new Map(seeds.map((entry) => [entry.targetId, entry])).values()) {
      const target = targets.findById(seed.accountId, seed.targetId)!;
      targets.update({ ...target, healthScore: healthScore(repository.openCounts(seed.targetId)) });
    }
  })();
  return risks;
}
