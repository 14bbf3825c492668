import { z } from 'zod';
import { REPORT_FORMATS, REPORT_LIMITS } from '../../domain/reports/snapshot.js';
import { DateTime, Id } from './common.js';

export const ReportFormat = z.enum(REPORT_FORMATS).meta({
  id: 'ReportFormat',
  description:
    'PDF (cover, contents with page numbers, summary with charts, one section per target); HTML (the same, one self-contained file with no script and no external resource); CSV (RFC 4180, one row per risk; needs the csv_export feature).',
});

const Values = (description: string) =>
  z
    .array(z.string().max(REPORT_LIMITS.maxFilterValueLength))
    .max(100)
    .optional()
    .meta({ description: `${description} At most 100 values.` });

/**
 * Not strict on purpose: an unknown key is refused by the service with a
 * message naming the allowed keys, which a schema error would not say.
 */
const ReportTargetsFilter = z
  .object({
    target_ids: Values('Targets by id.'),
    tags: Values('Targets carrying any of these tags.'),
    label: Values('Targets with exactly one of these labels.'),
  })
  .meta({
    id: 'ReportTargetsFilter',
    description: 'Which targets the report covers. Values within a key are alternatives; keys combine with AND. Other keys give 400.',
  });

const ReportRisksFilter = z
  .object({
    target_id: Values('Risks of these targets.'),
    status: Values('OPEN and/or CLOSED.'),
    tags: Values('Risks whose target carries any of these tags.'),
    'risk_definition.scan_type': Values('Scan types.'),
    'risk_definition.threat_level': Values('Threat levels.'),
    'risk_definition.title': Values('Exact titles.'),
  })
  .meta({ id: 'ReportRisksFilter', description: 'The filter keys of GET /v1/risks, with the same meaning. Other keys give 400.' });

export const ReportCreate = z
  .object({
    report_format: ReportFormat,
    targets_filter: ReportTargetsFilter.optional(),
    risks_filter: ReportRisksFilter.optional(),
  })
  .meta({ id: 'ReportCreate' });

export const ReportCreated = z.object({ data: z.object({ id: Id }) }).meta({ id: 'ReportCreated' });

export const ReportDownloadQuery = z.object({
  filename: z
    .string()
    .max(REPORT_LIMITS.maxFilenameLength)
    .optional()
    .meta({
      description: `Names the download: letters, digits, '.', '_', '-' and spaces are kept, other characters become '_', and the format's extension is added. At most ${REPORT_LIMITS.maxFilenameLength} characters. Default vigil-report-<date>.`,
    }),
  format: ReportFormat.optional().meta({
    description:
      'Serve the same report (the same snapshot of risks) in another format. Default: the format it was created in. CSV needs the csv_export feature (else 403).',
  }),
});

export const ReportListItem = z
  .object({
    id: Id,
    format: ReportFormat.meta({ description: 'The format the report was created in; GET /v1/reports/{id} serves it in this format unless asked for another.' }),
    filters: z
      .object({ targets_filter: z.record(z.string(), z.array(z.string())), risks_filter: z.record(z.string(), z.array(z.string())) })
      .meta({ description: 'The filters the report was created with, as they were applied (keys with an empty array left out); {} for none.' }),
    size: z.number().int().nullable().meta({
      description:
        "Bytes of the file in the report's own format (what a download without format returns); null if that file is missing from the data directory.",
    }),
    risk_count: z.number().int().meta({ description: 'Risks in the report.' }),
    matched_risks: z.number().int().meta({ description: 'Risks that matched the filters; more than risk_count when the report kept only the most severe.' }),
    target_count: z.number().int().meta({ description: 'Targets the report covers.' }),
    created_at: DateTime,
  })
  .meta({ id: 'ReportListItem' });
