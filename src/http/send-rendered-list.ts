import type { Response } from 'express';
import type { RenderedListResult } from '../app/pagination.js';

const DATA_OPEN = Buffer.from('{"data":[');
const DATA_CLOSE = Buffer.from(']}');

/**
 * Sends `{ data: [...], next_page_token? }` for a page the store rendered as
 * bytes (the inside of the data array): framed and written as they are,
 * never turned into a string and encoded again, nor copied.
 */
export function sendRenderedList(res: Response, page: RenderedListResult): void {
  const close = page.nextPageToken === undefined ? DATA_CLOSE : Buffer.from(`],"next_page_token":${JSON.stringify(page.nextPageToken)}}`, 'utf8');
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', DATA_OPEN.length + page.body.length + close.length);
  // Three writes in one writev, not a copy of the page joined with its frame (bench/targets-list.ts: a page is ~240 KiB).
  res.cork();
  res.write(DATA_OPEN);
  res.write(page.body);
  res.end(close);
}
