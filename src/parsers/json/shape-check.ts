import type { z } from 'zod';
import { MalformedResultError } from '../../domain/errors.js';

/** How a value should look, for a sentence like "expected an object with a 'site' array (ZAP ...); got an array". */
export interface ShapeExpectation {
  /** The expected format, e.g. 'ZAP Traditional JSON report'. */
  format: string;
  /** What the checked value should be, e.g. "an object with a 'site' array". */
  expected: string;
  /** Where the value sits in the file when it is not the whole document, e.g. 'line 3'. */
  where?: string;
  /** Where the checked value sits inside the document, for messages ('site[2].alerts[0].riskcode'), when it is not the whole document. */
  path?: readonly PropertyKey[];
}

/**
 * Validates a parsed value with a zod schema and returns the schema's output.
 * A mismatch becomes a MalformedResultError naming the first offending path,
 * what was found there, and the format that was expected.
 */
export function checkShape<S extends z.ZodType>(value: unknown, schema: S, expectation: ShapeExpectation): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const detail = issue ? describeIssue(value, issue, expectation.path ?? []) : 'it does not match';
  const prefix = expectation.where ? `At ${expectation.where}: expected` : 'Expected';
  throw new MalformedResultError(`${prefix} ${expectation.expected} (${expectation.format}); ${detail}.`);
}

type Issue = z.core.$ZodIssue;

function describeIssue(root: unknown, issue: Issue, prefix: readonly PropertyKey[]): string {
  const path = issue.path;
  const actual = valueAt(root, path);
  if (path.length === 0 && prefix.length === 0) return issue.code === 'invalid_type' ? `got ${describeValue(actual)}` : issue.message;
  const where = `'${formatPath([...prefix, ...path])}'`;
  if (issue.code === 'invalid_type') {
    if (actual === undefined) return `${where} is missing${describeKeys(valueAt(root, path.slice(0, -1)))}`;
    return `${where} is ${describeValue(actual)}, not ${withArticle(issue.expected)}`;
  }
  // Schemas in this folder phrase their own messages as predicates ("must be 0 to 3"); zod's defaults are sentences.
  return /^[a-z]/.test(issue.message) ? `${where} ${issue.message}` : `${where}: ${issue.message}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** Plain-English kind of a JSON value: 'an array', 'a string', 'null'... */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return 'nothing';
}

function describeKeys(parent: unknown): string {
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return '';
  const keys = Object.keys(parent);
  if (keys.length === 0) return ' (the object is empty)';
  const shown = keys.slice(0, 5).map((key) => truncate(key, 40));
  return ` (the object has ${shown.join(', ')}${keys.length > 5 ? ', ...' : ''})`;
}

function withArticle(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
