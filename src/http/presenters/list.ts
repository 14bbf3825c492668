import type { Response } from 'express';
import type { RenderedListResult } from '../../app/pagination.js';

const DATA_OPEN = Buffer.from('{"data":[');

/**
 * Sends `{ data: [...], next_page_token? }` for a page the store rendered as
 * bytes (the inside of the data array): framed and written in one piece,
 * never turned into a string and encoded again.
 */
export function sendRenderedList(res: Response, page: RenderedListResult): void {
  const close = Buffer.from(page.nextPageToken === undefined ? ']}' : `],"next_page_token":${JSON.stringify(page.nextPageToken)}}`, 'utf8');
  const body = Buffer.concat([DATA_OPEN, page.body, close]);
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
