import { z } from 'zod';
import { SCAN_TYPES, THREAT_LEVELS } from '../../domain/risks/finding.js';
import { MAX_ACCEPT_NOTE_LENGTH } from '../../domain/risks/risk.js';
import { DateTime, Id } from './common.js';

export const ThreatLevel = z.enum(THREAT_LEVELS).meta({
  id: 'ThreatLevel',
  description:
    "Vigil's severity scale. Scanner severities map onto it: CVSS base scores by the CVSS v3 qualitative ranges (9.0+ CRITICAL, 7.0+ HIGH, 4.0+ MEDIUM, 0.1+ LOW, 0 INFO); ZAP riskcode 3/2/1/0 as HIGH/MEDIUM/LOW/INFO; nuclei's severities by name (unknown as INFO); Nessus severity 4..0 as CRITICAL..INFO, overridden by a CVSS v3 score when present; OpenVAS by its severity score, else its threat word (Log as INFO); nmap open ports INFO and vulners entries by their CVSS; sslyze per check (see the README).",
});

export const RiskDefinition = z
  .object({
    scan_type: z.enum(SCAN_TYPES),
    title: z.string(),
    threat_level: ThreatLevel,
    description: z.string(),
    solution: z.string(),
    cvss: z.string().meta({ description: 'CVSS base score as a decimal string, or "" when the scanner gives none.' }),
    additional_info: z.object({}).meta({
      additionalProperties: true,
      description:
        'Scanner facts: for example cves, references, port and protocol, service, plugin or template ids, evidence, and for OpenVAS qod (Quality of Detection, 0-100) and nvt_oid.',
    }),
  })
  .meta({ id: 'RiskDefinition' });

export const Acceptance = z.object({ note: z.string(), created_at: DateTime, last_updated_at: DateTime }).meta({ id: 'Acceptance' });

export const Risk = z
  .object({
    id: Id,
    target_id: z.string(),
    target: z.string(),
    target_label: z.string(),
    tags: z.array(z.string()).meta({ description: "The target's tags." }),
    status: z
      .enum(['OPEN', 'CLOSED'])
      .meta({ description: 'OPEN while the latest scan of its target and type detects it; CLOSED once a later scan of that target and type does not.' }),
    first_detected_at: DateTime,
    last_detected_at: DateTime,
    is_accepted: z.boolean(),
    accepted_by: z.array(Acceptance).meta({ description: 'One entry per acceptance, oldest first; kept when the risk is un-accepted.' }),
    risk_definition: RiskDefinition,
  })
  .meta({ id: 'Risk' });

export const AcceptRisk = z
  .object({ note: z.string().min(1).max(MAX_ACCEPT_NOTE_LENGTH).meta({ description: 'Why the risk is accepted (a false positive, or by design).' }) })
  .meta({ id: 'AcceptRisk' });
