import type { Response } from 'express';
import type { RenderedListResult, StreamedListResult } from '../app/pagination.js';

const DATA_OPEN = Buffer.from('{"data":[');
const DATA_CLOSE = Buffer.from(']}');

/**
 * Sends `{ data: [...], next_page_token? }` for a page the store rendered as
 * bytes (the inside of the data array): framed and written as they are,
 * never turned into a string and encoded again, nor copied.
 */
export function sendRenderedList(res: Response, page: RenderedListResult): void {
  const close = closingOf(page);
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', DATA_OPEN.length + page.body.length + close.length);
  // Three writes in one writev, not a copy of the page joined with its frame (bench/targets-list.ts: a page is ~240 KiB).
  res.cork();
  res.write(DATA_OPEN);
  res.write(page.body);
  res.end(close);
}

function closingOf(page: { nextPageToken: string | undefined }): Buffer {
  return page.nextPageToken === undefined ? DATA_CLOSE : Buffer.from(`],"next_page_token":${JSON.stringify(page.nextPageToken)}}`, 'utf8');
}

/**
 * Sends `{ data: [...], next_page_token? }` as its pieces come (chunked),
 * each written once the client has taken the last, so a page in flight
 * holds about one piece of memory however large it is or however slow its
 * client. A client that goes stops the reading; a failure once the status
 * is sent can only cut the response short, so the socket is destroyed.
 */
export async function sendStreamedList(res: Response, page: StreamedListResult): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  try {
    res.write(DATA_OPEN);
    for await (const piece of page.pieces) {
      if (res.destroyed) return;
      if (!res.write(piece, 'utf8')) await drainedOrClosed(res);
    }
    res.end(closingOf(page));
  } catch (error) {
    res.destroy();
    throw error;
  }
}

function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
