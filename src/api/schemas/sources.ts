import { z } from 'zod';
import { MAX_SOURCE_NAME_LENGTH, SOURCE_TYPES } from '../../domain/sources/source.js';
import { Id } from './common.js';

export const SourceType = z
  .enum(SOURCE_TYPES)
  .meta({ id: 'SourceType', description: 'IMPORTED: results of scanners the customer runs elsewhere, uploaded with POST /v1/results.' });

export const Source = z
  .object({
    id: Id,
    source_type: SourceType,
    name: z.string(),
  })
  .meta({ id: 'Source' });

export const SourceCreate = z
  .object({
    source_type: SourceType,
    name: z
      .string()
      .min(1)
      .max(MAX_SOURCE_NAME_LENGTH)
      .meta({ description: `1 to ${MAX_SOURCE_NAME_LENGTH} characters; surrounding blanks are removed.` }),
  })
  .meta({ id: 'SourceCreate' });
