/** A scan's result file as a download: the same headers and bytes for GET /v1/results/{id} and the dashboard's link. */
import type { Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StoredResultFile } from '../app/ports.js';

export function sendResultFile(res: Response, opened: { file: StoredResultFile; content: Readable }): void {
  const { file, content } = opened;
  res.status(200);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.size));
  res.setHeader('Content-Disposition', `attachment; filename="${file.fileName.replace(/[^\w.-]/g, '_')}"`);
  void pipeline(content, res).catch(() => res.destroy());
}
