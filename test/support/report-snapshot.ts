/** A report snapshot built in memory, with hostile text, for renderer tests that need no database. */
import type { ReportSnapshot } from '../../src/domain/reports/snapshot.js';
import { HOSTILE, riskOf } from './report-data.js';

export function reportSnapshot(): ReportSnapshot {
  const targets = [
    { id: 't-web', target: 'https://shop.example.com', label: HOSTILE.label, tags: ['prod', 'web'], healthScore: { score: 33, grade: 'D' as const } },
    { id: 't-db', target: '203.0.113.7', label: '', tags: [], healthScore: { score: 100, grade: 'A' as const } },
  ];
  const risks = [
    riskOf({
      accountId: 'a',
      targetId: 't-web',
      title: HOSTILE.title,
      threatLevel: 'HIGH',
      cvss: '8.1',
      description: HOSTILE.description,
      solution: HOSTILE.solution,
      additionalInfo: { cves: ['CVE-2024-1111'], references: [HOSTILE.reference, 'https://owasp.org/xss'], evidence: HOSTILE.externalImage },
    }),
    riskOf({ accountId: 'a', targetId: 't-web', title: 'SQL injection in /login', threatLevel: 'CRITICAL', cvss: '9.8' }),
    riskOf({ accountId: 'a', targetId: 't-db', title: 'Open port 22/tcp', threatLevel: 'INFO', status: 'CLOSED' }),
  ].map((risk) => ({
    id: risk.id,
    targetId: risk.targetId,
    status: risk.status,
    isAccepted: risk.isAccepted,
    firstDetectedAt: risk.firstDetectedAt,
    lastDetectedAt: risk.lastDetectedAt,
    definition: risk.definition,
  }));
  return {
    version: 1,
    id: '5b0c5f4e-0000-4000-8000-000000000001',
    accountName: 'acme & <partners>',
    createdAt: '2026-11-25T09:30:00.000Z',
    format: 'HTML',
    filters: { targets_filter: { tags: ['prod'] }, risks_filter: { status: ['OPEN', 'CLOSED'] } },
    targets,
    risks,
    matchedRisks: 12,
  };
}
