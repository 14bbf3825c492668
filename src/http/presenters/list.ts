import type { Response } from 'express';
import type { ListResult } from '../../app/pagination.js';

/**
 * Sends `{ data: [...], next_page_token? }` from items already rendered as
 * JSON text. Encoded once into a Buffer and written with res.end: res.send
 * would encode it again to measure it, and byteLength plus a string write
 * walks the text twice.
 */
export function sendJsonList(res: Response, page: ListResult<string>): void {
  const token = page.nextPageToken === undefined ? '' : `,"next_page_token":${JSON.stringify(page.nextPageToken)}`;
  const body = `{"data":[${page.items.join(',')}]${token}}`;
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const bytes = Buffer.from(body, 'utf8');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
