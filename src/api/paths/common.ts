import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ErrorBody } from '../schemas/common.js';

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

/** The error responses every authenticated operation can give. */
export const STANDARD_ERRORS: RouteConfig['responses'] = {
  400: errorResponse('Invalid or missing parameters; `error` says what to change.'),
  401: errorResponse('Missing or invalid API key.'),
  404: errorResponse('No resource at the path, or the id does not belong to the account.'),
  429: {
    ...errorResponse('Rate limit exceeded; wait the number of seconds in Retry-After.'),
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  },
  500: errorResponse('Server error; quote `ref` when reporting it.'),
};

/** Operations that take a JSON body can also refuse it for its size. */
export const BODY_ERRORS: RouteConfig['responses'] = {
  ...STANDARD_ERRORS,
  413: errorResponse('The request body is larger than 1 MiB.'),
  415: errorResponse('The request body has a Content-Encoding (compressed bodies are not accepted), or is not UTF-8 JSON.'),
};

/** Operations that wait for a bounded pool of workers (reports) can find it full, or lose their worker. */
export const UNAVAILABLE: RouteConfig['responses'] = {
  503: errorResponse("The report workers are full or the report's worker stopped; `error` says which. Try again later."),
};

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } };
}

export const IdParam = z.object({ id: z.string().meta({ description: 'Resource id.' }) });

export const Deleted = z.object({ data: z.object({ id: z.string(), deleted: z.literal(true) }) }).meta({ id: 'Deleted' });
