/**
 * Seeds a data directory for the reports benchmark: `targetCount` targets
 * (bench/support/seed.ts) and `riskCount` risks spread over them, with
 * scanner-like text of realistic length (a description of a few sentences, a
 * solution, references, evidence), written through the risk repository in
 * one transaction.
 */
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import { THREAT_LEVELS, SCAN_TYPES } from '../../src/domain/risks/finding.js';
import type { Risk } from '../../src/domain/risks/risk.js';
import { composeCore } from '../../src/main/composition-root.js';
import { seedTargets } from './seed.js';

const WORDS = (
  'the server accepts connections with an outdated protocol version which allows an attacker on the network path to downgrade ' +
  'the session and read or modify traffic; the affected component was identified from its banner and the response to a crafted request ' +
  'cross-site scripting injection header cookie certificate cipher configuration version exposure'
).split(' ');

function sentence(seed: number, words: number): string {
  const picked = Array.from({ length: words }, (_, index) => WORDS[(seed * 31 + index * 17) % WORDS.length]!);
  return `${picked.join(' ')}.`;
}

function paragraph(seed: number, sentences: number): string {
  return Array.from({ length: sentences }, (_, index) => sentence(seed + index, 12 + ((seed + index) % 9))).join(' ');
}

function riskFor(accountId: string, targetId: string, index: number): Risk {
  const at = new Date(Date.parse('2026-06-01T00:00:00.000Z') + index * 60_000).toISOString();
  const scanType = SCAN_TYPES[index % SCAN_TYPES.length]!;
  const level = THREAT_LEVELS[(index * 7) % THREAT_LEVELS.length]!;
  return {
    id: randomUUID(),
    accountId,
    targetId,
    scanType,
    fingerprint: `bench:${index}`,
    status: index % 5 === 0 ? 'CLOSED' : 'OPEN',
    firstDetectedAt: at,
    lastDetectedAt: at,
    isAccepted: index % 11 === 0,
    acceptedBy: [],
    definition: {
      scan_type: scanType,
      title: `Finding ${index}: ${sentence(index, 5 + (index % 4)).slice(0, -1)}`,
      threat_level: level,
      description: paragraph(index, 3 + (index % 4)),
      solution: paragraph(index + 1, 1 + (index % 2)),
      cvss: level === 'INFO' ? '' : (4 + (index % 60) / 10).toFixed(1),
      additional_info: {
        cves: [`CVE-2025-${10000 + index}`],
        references: [`https://nvd.nist.gov/vuln/detail/CVE-2025-${10000 + index}`, `https://vendor.example.com/advisories/${index}`],
        port: 443,
        protocol: 'tcp',
        evidence: `HTTP/1.1 200 OK Server: nginx/1.18.${index % 30}`,
      },
    },
    createdAt: at,
  };
}

export function seedReportData(dataDir: string, targetCount: number, riskCount: number): { accountId: string } {
  const seeded = seedTargets(dataDir, targetCount);
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  try {
    const targetIds = (core.db.prepare('SELECT id FROM targets WHERE account_id = ? ORDER BY seq').all(seeded.accountId) as Array<{ id: string }>).map(
      (row) => row.id,
    );
    core.db.transaction(() => {
      // The CSV report needs the csv_export feature; seedTargets creates a plain account.
      core.db.prepare(`UPDATE accounts SET features = '["csv_export"]' WHERE id = ?`).run(seeded.accountId);
      for (let index = 0; index < riskCount; index++) core.riskRepository.insert(riskFor(seeded.accountId, targetIds[index % targetIds.length]!, index));
    })();
    return { accountId: seeded.accountId };
  } finally {
    core.db.close();
  }
}
