/**
 * The bracket form of `filters`: what axios and qs send for an object
 * (`filters[status][0]=OPEN`, `filters[status][]=OPEN`, `filters[status]=OPEN`).
 * It is read into the object the JSON form names, so that one check
 * (filtersFrom) serves both forms and they mean the same.
 */
import { InvalidRequestError } from '../errors.js';

/** `filters[key]`, then optionally `[]` or `[index]`. A key may hold dots (risk_definition.scan_type), not brackets. */
const BRACKET_NAME = /^filters\[([^[\]]+)\](?:\[(\d{0,3})\])?$/;

/** As the JSON form: at most 100 values a key (filtersFrom); keys beyond these could not all be allowed ones. */
const BRACKET_FILTER_LIMITS = { maxValuesPerKey: 100, maxKeys: 20 };

export function isBracketFilterName(name: string): boolean {
  return name.startsWith('filters[');
}

interface Placed {
  index: number | undefined;
  value: string;
}

/** The filters object of the bracket-form query parameters given, in the order their indexes say, else the order sent. */
export function filtersFromBrackets(params: ReadonlyArray<readonly [name: string, value: string]>): Record<string, string[]> {
  const byKey = new Map<string, Placed[]>();
  for (const [name, value] of params) {
    const match = BRACKET_NAME.exec(name);
    if (match === null) {
      throw new InvalidRequestError(
        `query parameter '${name.slice(0, 80)}' is not a filters form Vigil reads; send filters[key][]=value (or filters[key][0]=value, filters[key]=value), or filters as one JSON string`,
      );
    }
    const key = match[1]!;
    const index = match[2] === undefined || match[2] === '' ? undefined : Number(match[2]);
    const placed = byKey.get(key) ?? [];
    if (placed.length === 0 && byKey.size === BRACKET_FILTER_LIMITS.maxKeys)
      throw new InvalidRequestError(`filters may name at most ${BRACKET_FILTER_LIMITS.maxKeys} keys`);
    if (index !== undefined && index >= BRACKET_FILTER_LIMITS.maxValuesPerKey)
      throw new InvalidRequestError(`filters[${key}][${index}]: indexes go from 0 to ${BRACKET_FILTER_LIMITS.maxValuesPerKey - 1}`);
    if (index !== undefined && placed.some((other) => other.index === index))
      throw new InvalidRequestError(`filters[${key}][${index}] is sent twice; send each index once`);
    if (placed.length === BRACKET_FILTER_LIMITS.maxValuesPerKey)
      throw new InvalidRequestError(`filters.${key} may hold at most ${BRACKET_FILTER_LIMITS.maxValuesPerKey} values`);
    placed.push({ index, value });
    byKey.set(key, placed);
  }
  const filters: Record<string, string[]> = {};
  for (const [key, placed] of byKey) {
    // Indexed values in index order (qs places them so), then the others as sent; sort is stable.
    const last = BRACKET_FILTER_LIMITS.maxValuesPerKey;
    placed.sort((a, b) => (a.index ?? last) - (b.index ?? last));
    Object.defineProperty(filters, key, { value: placed.map((item) => item.value), enumerable: true, writable: true, configurable: true });
  }
  return filters;
}
