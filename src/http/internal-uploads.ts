/**
 * The collector's internal endpoint for scanner pods (DESIGN.md decision 1):
 * PUT /internal/v1/scans/{scanId}/results/{file} with the raw file as the
 * body and `Authorization: Bearer <upload token>`. Not part of /v1: only the
 * scanner Jobs call it, each with its own Scan's token.
 */
import type { Request, Response, Router } from 'express';
import express from 'express';
import type { UploadsService } from '../app/uploads-service.js';
import type { RateLimiter } from './rate-limiter.js';
import type { RequestContext } from './request-context.js';

function bearer(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

/**
 * Wrong tokens are throttled per client address as wrong API keys are
 * (issue 26), in the same limiter under their own keys; a missing token is
 * not a guess. The token is checked before the body is read, and accept()
 * checks it again for its own sake.
 */
function assertTokenThrottled(uploads: UploadsService, failures: RateLimiter, req: Request, scanId: string, token: string | undefined): void {
  if (token === undefined) return uploads.assertToken(scanId, token);
  failures.guardFailures(`upload-token:${req.socket.remoteAddress ?? 'unknown'}`, () => uploads.assertToken(scanId, token));
}

export function internalUploadsRouter(uploads: UploadsService, authFailureLimiter: RateLimiter): Router {
  const router = express.Router();
  router.put('/internal/v1/scans/:scanId/results/:file', async (req: Request, res: Response) => {
    (res.locals as RequestContext).route = 'uploadResultFile';
    const scanId = String(req.params.scanId);
    const file = String(req.params.file);
    assertTokenThrottled(uploads, authFailureLimiter, req, scanId, bearer(req));
    // Not destroyed when accept() stops reading: the refusal must still reach the client (refused-body.ts).
    const stored = await uploads.accept(scanId, bearer(req), file, req.iterator({ destroyOnReturn: false }));
    res.json({ data: { scan_id: scanId, file, ...stored } });
  });
  return router;
}
