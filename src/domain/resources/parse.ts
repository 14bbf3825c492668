/** Parsing custom-resource objects with their zod schemas, with the errors the API server would give. */
import type { z } from 'zod';
import { InvalidRequestError } from '../errors.js';

function describeIssues(error: z.ZodError, prefix: string): string {
  return error.issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Parses with the schema; throws InvalidRequestError naming every field at fault under `prefix` (e.g. "spec"). */
export function parseResource<T extends z.ZodType>(schema: T, input: unknown, prefix: string): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidRequestError(describeIssues(result.error, prefix));
  return result.data;
}
