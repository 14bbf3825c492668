import { randomUUID } from 'node:crypto';
import type { ScanType, ThreatLevel } from '../../src/domain/risks/finding.js';
import type { Risk, RiskStatus } from '../../src/domain/risks/risk.js';

/** The fields store tests vary; the rest of the Risk is empty. */
export interface RiskFields {
  accountId: string;
  targetId: string;
  fingerprint: string;
  title: string;
  threatLevel: ThreatLevel;
  status?: RiskStatus;
  scanType?: ScanType;
  /** Created and first detected (and last, unless lastDetectedAt says otherwise). */
  at: string;
  lastDetectedAt?: string;
}

/** A valid open (or given) Risk for store-level seeding, not accepted, with an empty definition but for its title and level. */
export function aRisk(fields: RiskFields): Risk {
  const scanType = fields.scanType ?? 'NMAP';
  return {
    id: randomUUID(),
    accountId: fields.accountId,
    targetId: fields.targetId,
    scanType,
    fingerprint: fields.fingerprint,
    status: fields.status ?? 'OPEN',
    firstDetectedAt: fields.at,
    lastDetectedAt: fields.lastDetectedAt ?? fields.at,
    isAccepted: false,
    acceptedBy: [],
    createdAt: fields.at,
    definition: { scan_type: scanType, title: fields.title, threat_level: fields.threatLevel, description: '', solution: '', cvss: '', additional_info: {} },
  };
}
