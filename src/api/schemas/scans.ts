import { z } from 'zod';
import { SCAN_PDF_LIMITS } from '../../domain/reports/scan-pdf-model.js';
import { SCAN_TYPES } from '../../domain/risks/finding.js';
import { SCAN_STATES } from '../../domain/scans/scan.js';
import { MAX_TARGET_LENGTH } from '../../domain/targets/target-address.js';
import { DateTime, Id } from './common.js';

export const RunnableScanType = z.enum(SCAN_TYPES).meta({ id: 'RunnableScanType' });
export const ScanState = z.enum(SCAN_STATES).meta({
  id: 'ScanState',
  description:
    'QUEUED, RUNNING, STOPPING, then one of the terminal states SUCCEEDED, STOPPED, FAILED, OVER_LIMIT. STOPPING moves to STOPPED once the scanner is gone. Any failure (scanner exit code, timeout, lost process, missing program) moves to FAILED with a condition saying why.',
});

const RiskRef = z.object({ risk_id: z.string() });

export const Condition = z
  .object({
    type: z.string(),
    status: z.enum(['True', 'False', 'Unknown']),
    reason: z.string(),
    message: z.string(),
    lastTransitionTime: DateTime,
  })
  .meta({ id: 'ScanCondition', description: 'Why the scan is in its state (Kubernetes condition conventions).' });

export const Scan = z
  .object({
    id: Id,
    type: RunnableScanType,
    state: ScanState,
    progress: z.number().int().min(0).max(100).meta({ description: 'Percent done, 0 to 100; never decreases. 100 once SUCCEEDED.' }),
    is_authenticated: z
      .boolean()
      .meta({ description: 'True when authentication was enabled and at least one target had a login recording when the Scan was created.' }),
    risks: z.object({ new_open: z.array(RiskRef), still_open: z.array(RiskRef), closed: z.array(RiskRef) }),
    results: z.array(z.object({ result_id: z.string(), content_type: z.string() })).meta({
      description: `Empty until the Scan is SUCCEEDED; then the raw scanner output files, followed by one application/pdf file: the Scan's PDF (its targets and its new_open, still_open and closed risks, at most ${SCAN_PDF_LIMITS.maxRisks} risks, saying so when cut). Download each with GET /v1/results/{result_id}.`,
    }),
    requested_targets: z.array(z.object({ target_id: z.string(), target: z.string() })),
    resolved_targets: z
      .array(z.object({ target_id: z.string(), target: z.string(), addresses: z.array(z.string()) }))
      .meta({ description: 'Targets actually scanned, each with the public IPv4 addresses its host resolved to when the scan started.' }),
    skipped_targets: z.array(z.object({ target_id: z.string(), skipped_reason: z.string() })),
    created_at: DateTime,
    started_at: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    scheduled_by: z.string().nullable().meta({ description: 'Id of the scheduled scan whose run created this Scan; null for scans started directly.' }),
    report_id: z.string().nullable(),
    conditions: z.array(Condition),
  })
  .meta({ id: 'Scan' });

export const StartScan = z
  .object({
    type: RunnableScanType,
    targets: z.array(z.string().min(1).max(MAX_TARGET_LENGTH)).min(1).max(100).optional().meta({
      description: 'Public IPv4 addresses, domain names or http(s) URLs; values that are not yet Targets are created as Targets.',
    }),
    target_ids: z.array(z.string()).min(1).max(100).optional().meta({ description: "Ids of the account's targets; other ids are ignored." }),
    tags: z.array(z.string()).min(1).max(100).optional().meta({ description: 'Selects every target with any of these tags.' }),
    use_authentication: z.boolean().optional().meta({ description: 'Only for OWASP_ZAP and OWASP_ZAP_ACTIVE, where it defaults to true.' }),
  })
  .meta({ id: 'StartScan', description: 'Send exactly one of targets, target_ids and tags.' });
