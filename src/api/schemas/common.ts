/**
 * Shapes shared by every part of the /v1 API. zod schemas are the single
 * source of truth: the OpenAPI document is generated from them (DESIGN.md 10).
 */
import { z } from 'zod';

export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'What went wrong and what to change, in one sentence.' }),
    ref: z.string().optional().meta({ description: 'Request id; quote it when reporting a problem. The same id is in the service log line for the request.' }),
  })
  .meta({ id: 'Error' });

export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

export function listEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({
    data: z.array(schema),
    next_page_token: z.string().optional().meta({ description: 'Present only when more results exist; pass it as page_token to get the next page.' }),
  });
}

export const DateTime = z.string().meta({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' });

export const Id = z.string().meta({
  description:
    'A UUID, to be treated as opaque. New targets, risks and webhook events get version 7 ids, which sort in the order they were made; the others version 4.',
  example: '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17',
});

export const ListQuery = z.object({
  page_token: z
    .string()
    .optional()
    .meta({ description: 'Opaque token from next_page_token of the previous page. Tokens are signed; an altered token gives 400.' }),
  page_size: z.coerce.number().int().optional().meta({
    description:
      'Results per page, 1 to 499, written as an integer (anything else, such as Infinity, 1e3 or an empty value, gives 400). The default, and the largest page, is 500; an integer outside 1..499 gives the default. A page of targets, risks or scans also ends early at about 4 MiB of JSON, with a next_page_token.',
  }),
  filters: z
    .string()
    .optional()
    .meta({
      description:
        'A JSON object sent as one URL-encoded string; each value is an array of strings (at most 100). A result matches when, for every key, its value is one of the array items. Unknown keys give 400 naming the allowed keys. ' +
        'The bracket form that axios and qs send for an object means the same: filters[status][0]=OPEN&filters[risk_definition.scan_type][0]=NMAP, filters[status][]=OPEN, or filters[status]=OPEN for one value (brackets may be URL-encoded as %5B and %5D; indexes 0 to 99). ' +
        'Sending both forms in one request gives 400.',
      example: '{"tags":["production"]}',
    }),
});
