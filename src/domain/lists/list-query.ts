/**
 * Common list behaviour (SPEC.md): page size rules, the filters parameter,
 * and the sort parameter. Pure parsing; the store turns the result into SQL.
 */
import { InvalidRequestError } from '../errors.js';

export const MAX_PAGE_SIZE = 500;

/** 1..499 is taken as given; anything else (absent, 0, 500, 10000, negative) means the default of 500. */
export function pageSizeFrom(raw: number | undefined): number {
  return raw !== undefined && Number.isInteger(raw) && raw >= 1 && raw <= 499 ? raw : MAX_PAGE_SIZE;
}

/** False for text with a lone UTF-16 surrogate, which has no UTF-8 form and would be stored mangled (issue 16). */
export function isWellFormedText(text: string): boolean {
  return !/\p{Surrogate}/u.test(text);
}

export type Filters<K extends string> = Partial<Record<K, string[]>>;

/** Parses the URL-decoded `filters` JSON object; each key must be allowed and each value an array of strings. */
export function parseFilters<K extends string>(raw: string | undefined, allowed: readonly K[]): Filters<K> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidRequestError(`filters must be a JSON object such as {"${allowed[0]}":["value"]}; the value sent is not valid JSON`);
  }
  return filtersFrom(parsed, allowed, 'filters');
}

/**
 * Checks an already-parsed filters object (a list's `filters`, a report's
 * targets_filter and risks_filter): each key allowed, each value an array of
 * at most 100 strings. `name` is how the errors call the object.
 */
export function filtersFrom<K extends string>(parsed: unknown, allowed: readonly K[], name: string): Filters<K> {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidRequestError(`${name} must be a JSON object whose keys are among: ${allowed.join(', ')}`);
  }
  const filters: Filters<K> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (allowed.length === 0) throw new InvalidRequestError('this list takes no filters; leave filters out or send {}');
    if (!(allowed as readonly string[]).includes(key)) {
      throw new InvalidRequestError(`${name} key '${key}' is not supported here; allowed keys: ${allowed.join(', ')}`);
    }
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      throw new InvalidRequestError(`${name}.${key} must be an array of strings`);
    }
    if (value.length > 100) throw new InvalidRequestError(`${name}.${key} may hold at most 100 values`);
    if (!value.every(isWellFormedText)) throw new InvalidRequestError(`${name}.${key} holds a lone UTF-16 surrogate; send valid Unicode text`);
    // An empty array asks for nothing in particular: it does not filter.
    if (value.length > 0) filters[key as K] = value as string[];
  }
  return filters;
}

export type SortDirection = 'asc' | 'desc';

export interface SortField<K extends string> {
  field: K;
  direction: SortDirection;
}

/** How a page token names the order it continues (`label:asc,seq:desc`); `fallback` when no sort is given. */
export function sortOrderName(sort: ReadonlyArray<SortField<string>>, fallback: string): string {
  return sort.map((field) => `${field.field}:${field.direction}`).join(',') || fallback;
}

/** Parses `sort`: comma-separated fields, each optionally followed by a space and asc or desc (default asc). */
export function parseSort<K extends string>(raw: string | undefined, allowed: readonly K[]): Array<SortField<K>> {
  if (raw === undefined || raw.trim() === '') return [];
  const fields: Array<SortField<K>> = [];
  for (const part of raw.split(',')) {
    const [field, direction = 'asc', ...extra] = part.trim().split(/\s+/);
    if (field === undefined || field === '' || !(allowed as readonly string[]).includes(field)) {
      throw new InvalidRequestError(`sort field '${field ?? ''}' is not supported; allowed fields: ${allowed.join(', ')}`);
    }
    const lower = direction.toLowerCase();
    if ((lower !== 'asc' && lower !== 'desc') || extra.length > 0) {
      throw new InvalidRequestError(`sort '${part.trim()}' must be a field optionally followed by a space and asc or desc`);
    }
    if (fields.some((existing) => existing.field === field)) {
      throw new InvalidRequestError(`sort names '${field}' more than once`);
    }
    fields.push({ field: field as K, direction: lower });
  }
  return fields;
}
