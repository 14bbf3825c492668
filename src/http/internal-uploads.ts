/**
 * The collector's internal endpoint for scanner pods (DESIGN.md decision 1):
 * PUT /internal/v1/scans/{scanId}/results/{file} with the raw file as the
 * body and `Authorization: Bearer <upload token>`. Not part of /v1: only the
 * scanner Jobs call it, each with its own Scan's token.
 */
import type { Request, Response, Router } from 'express';
import express from 'express';
import type { UploadsService } from '../app/uploads-service.js';
import type { RequestContext } from './request-context.js';

function bearer(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

export function internalUploadsRouter(uploads: UploadsService): Router {
  const router = express.Router();
  router.put('/internal/v1/scans/:scanId/results/:file', async (req: Request, res: Response) => {
    (res.locals as RequestContext).route = 'uploadResultFile';
    const scanId = String(req.params.scanId);
    const file = String(req.params.file);
    const stored = await uploads.accept(scanId, bearer(req), file, req);
    res.json({ data: { scan_id: scanId, file, ...stored } });
  });
  return router;
}
