/**
 * Turns the bracket form of `filters` in a /v1 query string into the JSON
 * form, before openapi-backend parses the query (with qs, which would hand
 * the validator an object where the document says string). The one place
 * the bracket form is read; everything after it sees `filters={...}`.
 */
import { InvalidRequestError } from '../domain/errors.js';
import { filtersFromBrackets, isBracketFilterName } from '../domain/lists/bracket-filters.js';

/** Cheap test first: most requests have no bracket form and keep their query string untouched. */
const MAY_HOLD_BRACKETS = /(^|&)filters(\[|%5b)/i;

export interface RewrittenQuery {
  query: string;
  /** Why the bracket form was refused; the query then holds no filters. Raised after authentication, so a caller without a key still gets 401. */
  problem?: InvalidRequestError;
}

export function bracketFiltersAsJson(query: string): RewrittenQuery {
  if (!MAY_HOLD_BRACKETS.test(query)) return { query };
  const rest = new URLSearchParams();
  const bracketed: Array<[string, string]> = [];
  for (const [name, value] of new URLSearchParams(query)) {
    if (isBracketFilterName(name)) bracketed.push([name, value]);
    else rest.append(name, value);
  }
  if (bracketed.length === 0) return { query };
  if (rest.has('filters')) {
    return {
      query: withoutFilters(rest),
      problem: new InvalidRequestError(
        'filters is sent in two forms; use one: either filters={"key":["value"]} (one JSON string) or filters[key][]=value (brackets)',
      ),
    };
  }
  try {
    rest.append('filters', JSON.stringify(filtersFromBrackets(bracketed)));
    return { query: rest.toString() };
  } catch (error) {
    if (error instanceof InvalidRequestError) return { query: rest.toString(), problem: error };
    throw error;
  }
}

function withoutFilters(params: URLSearchParams): string {
  params.delete('filters');
  return params.toString();
}
