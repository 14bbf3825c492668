import type { Response } from 'express';
import type { ListResult } from '../../app/pagination.js';

/**
 * Sends `{ data: [...], next_page_token? }` from items already rendered as
 * JSON text. Written with res.end rather than res.send: send copies the
 * whole page into a Buffer to measure it, while byteLength only counts.
 */
export function sendJsonList(res: Response, page: ListResult<string>): void {
  const token = page.nextPageToken === undefined ? '' : `,"next_page_token":${JSON.stringify(page.nextPageToken)}`;
  const body = `{"data":[${page.items.join(',')}]${token}}`;
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body, 'utf8'));
  res.end(body, 'utf8');
}
