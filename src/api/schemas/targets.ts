import { z } from 'zod';
import { DateTime, Id } from './common.js';
import { MAX_TARGET_LENGTH } from '../../domain/targets/target-address.js';
import { HEALTH_GRADES } from '../../domain/targets/health-score.js';
import { TARGET_ORIGINS, type TargetUpdateInput, type TargetInput } from '../../domain/targets/target.js';

export const MAX_LABEL_LENGTH = 255;
const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 255;

export {
  ZapHeader,
  SAME_SITE_VALUES,
  ZapCookie,
  ZapSettings,
  ZapSettingsInput,
  type ZapSettingsValue,
  type ZapSettingsInputValue,
} from '../../domain/scanners/zap-settings.js';
import { ZapSettings, ZapSettingsInput } from '../../domain/scanners/zap-settings.js';

const ScannerSettings = z.object({ zap: ZapSettings }).meta({ id: 'ScannerSettings' });
const ScannerSettingsInput = z.object({ zap: ZapSettingsInput.optional() }).meta({ id: 'ScannerSettingsInput' });

export const HealthScore = z
  .object({
    score: z.number().min(0).max(100),
    grade: z.enum(HEALTH_GRADES),
  })
  .meta({
    id: 'HealthScore',
    description:
      'score = max(0, 100 - 40 per critical - 20 per high - 7 per medium - 2 per low) over the open, unaccepted risks of the target; informational risks cost nothing. grade: A 90-100, B 75-89, C 50-74, D 25-49, F 0-24. A target without open risks scores 100, grade A.',
  });

const tagsField = z
  .array(z.string().min(1).max(MAX_TAG_LENGTH))
  .max(MAX_TAGS)
  .meta({ description: `At most ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters; stored in lowercase, duplicates removed.` });

export const Target = z
  .object({
    id: Id,
    target: z
      .string()
      .max(MAX_TARGET_LENGTH)
      .meta({ description: 'Public IPv4 address, fully qualified domain name, or http(s) URL, normalised (host in lowercase).' }),
    label: z.string().max(MAX_LABEL_LENGTH).meta({ description: 'Empty when none was given.' }),
    tags: z.array(z.string()),
    health_score: HealthScore,
    auth_selenium_file: z.string().optional().meta({ description: 'File name of the attached login recording; absent when none.' }),
    openapi_file: z.string().optional().meta({
      description: 'File name of the attached API definition (OpenAPI 2.0 or 3.x); OWASP_ZAP and OWASP_ZAP_ACTIVE scans import it. Absent when none.',
    }),
    scanner_settings: ScannerSettings,
    origin: z.enum(TARGET_ORIGINS).meta({
      description: 'How the target came to exist. Only MANUAL and INTERNAL_SCANNER targets can be deleted; UPLOADED_RESULTS targets cannot be updated.',
    }),
    created_at: DateTime,
    last_scanned_at: DateTime.nullable().meta({ description: 'When a scan of this target last finished; null before the first.' }),
    os: z
      .string()
      .optional()
      .meta({ description: 'Best operating-system match of the latest uploaded scanner file that reported one (nmap OS detection); absent when none did.' }),
    hostname: z.string().optional().meta({ description: 'Host name the latest uploaded scanner file reported for the target; absent when none did.' }),
  })
  .meta({ id: 'Target' });

export const TargetCreate = z
  .object({
    target: z.string().min(1).max(MAX_TARGET_LENGTH),
    label: z.string().max(MAX_LABEL_LENGTH).optional(),
    tags: tagsField.optional(),
    scanner_settings: ScannerSettingsInput.optional(),
  })
  .meta({ id: 'TargetCreate' }) satisfies z.ZodType<TargetInput>;

export const TargetUpdate = z
  .object({
    label: z.string().max(MAX_LABEL_LENGTH).optional(),
    tags: tagsField.optional().meta({ description: 'Replaces all tags; an empty array removes them all.' }),
    scanner_settings: ScannerSettingsInput.optional().meta({
      description:
        'Sending any crawl setting (the first seven zap fields) replaces all seven, the rest taking their defaults; headers and cookies are each replaced only when sent.',
    }),
  })
  .meta({ id: 'TargetUpdate' }) satisfies z.ZodType<TargetUpdateInput>;
