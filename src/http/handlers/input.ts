/**
 * Request input after openapi-backend has checked its shape: zod parses it
 * once more for the rules a JSON schema cannot say (URLs, regular
 * expressions) and to strip undocumented fields (SPEC.md rule 1).
 */
import type { z } from 'zod';
import { InvalidRequestError } from '../../domain/errors.js';
import type { ListParams } from '../../app/pagination.js';

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.');
  throw new InvalidRequestError(field === '' ? issue.message : `${field} ${issue.message}`);
}

/** page_size must be written as an integer (README, Lists): not empty, not Infinity, not 1e3. */
const INTEGER = /^[+-]?\d{1,15}$/;

export function listQuery(query: Record<string, string | undefined>): ListParams {
  const raw = query.page_size;
  if (raw !== undefined && !INTEGER.test(String(raw).trim())) {
    throw new InvalidRequestError(`page_size must be an integer (1 to 499); '${String(raw).slice(0, 20)}' is not`);
  }
  return { page_token: query.page_token, page_size: raw === undefined ? undefined : Number(raw), filters: query.filters };
}
