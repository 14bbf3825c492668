/**
 * Refusals every request gets before routing or authentication (issue 16):
 * a path whose percent-escapes do not decode to UTF-8 is a 400, and a body
 * with a Content-Encoding is a 415. Vigil takes no compressed bodies: JSON
 * bodies are small, uploads are compressed already, and inflating would put
 * a decompression step in front of every size limit.
 */
import { Buffer } from 'node:buffer';
import type { NextFunction, Request, Response } from 'express';
import iconv from 'iconv-lite';
import { InvalidRequestError } from '../domain/errors.js';
import { isWellFormedText } from '../domain/lists/list-query.js';
import { JsonNestingGuard } from '../parsers/json/nesting-guard.js';
import { HttpError } from './errors.js';

/**
 * How deeply a JSON request body may nest arrays and objects. The deepest
 * body the API takes nests 5 levels (a target's scanner_settings.zap.cookies);
 * the bound keeps a body of brackets from reaching code that walks the parsed
 * value recursively (the lone-surrogate check, validation) and overflowing the stack.
 */
export const MAX_JSON_NESTING = 64;

export function refuseMalformedRequests(req: Request, _res: Response, next: NextFunction): void {
  const queryStart = req.originalUrl.indexOf('?');
  const path = queryStart === -1 ? req.originalUrl : req.originalUrl.slice(0, queryStart);
  if (!decodes(path)) {
    next(new HttpError(400, 'The request path has a malformed percent-escape; encode it as UTF-8 (e.g. %C3%A9).'));
    return;
  }
  const encoding = req.get('content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    next(new HttpError(415, `Content-Encoding '${encoding.slice(0, 40)}' is not supported; send the body uncompressed.`));
    return;
  }
  next();
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * express.json's `verify` hook: runs on the raw bytes before they are parsed,
 * so a body nested deeper than MAX_JSON_NESTING is a 400 before anything
 * walks it (issue 26: 4,000 levels in 8 KB overflowed the stack, a 500).
 * Brackets are counted outside strings in one linear pass, no recursion.
 */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer, charset: string): void {
  // body-parser takes any utf-* charset; the guard reads UTF-8, where brackets and quotes are single bytes.
  const utf8 = /^utf-?8$/i.test(charset) ? body : Buffer.from(iconv.decode(body, charset), 'utf8');
  if (new JsonNestingGuard(MAX_JSON_NESTING).accept(utf8)) return;
  throw new InvalidRequestError(
    `the request body nests JSON arrays or objects more than ${MAX_JSON_NESTING} levels deep; no Vigil request needs more than a few levels`,
  );
}

/**
 * A JSON body whose strings hold a lone UTF-16 surrogate (`"\ud800"`) is a
 * 400: such text has no UTF-8 form, so it would be stored mangled and read
 * back longer than it was checked (issue 16).
 */
export function refuseLoneSurrogates(req: Request, _res: Response, next: NextFunction): void {
  const where = loneSurrogateIn(req.body, 'request body');
  if (where === undefined) next();
  else next(new InvalidRequestError(`${where} holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape); send valid Unicode text`));
}

/** Recursive, which is safe only because refuseDeepJson bounded the nesting before the body was parsed. */
function loneSurrogateIn(value: unknown, where: string): string | undefined {
  if (typeof value === 'string') return isWellFormedText(value) ? undefined : where;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const field = where === 'request body' ? key : `${where}.${key}`;
    if (!isWellFormedText(key)) return field;
    const found = loneSurrogateIn(item, field);
    if (found !== undefined) return found;
  }
  return undefined;
}
