/**
 * /docs: the API reference a person reads, rendered in the browser by
 * Swagger UI from the same OpenAPI document /v1/openapi.json serves. Every
 * asset comes from Vigil itself (swagger-ui-dist, read once at start), so
 * it works offline and under a policy that allows scripts from Vigil's own
 * origin only: no inline script, no CDN, no validator badge calling out.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router, type Response } from 'express';
import type { RequestContext } from './request-context.js';

/**
 * Swagger UI sets inline styles as it renders (its React components), hence
 * 'unsafe-inline' for styles; scripts are Vigil's own files only.
 */
const API_REFERENCE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

interface DocsAsset {
  path: string;
  contentType: string;
  body: Buffer;
}

/** Starts Swagger UI on the served document; "Try it out" sends the key given under Authorize. */
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
`;

function docsAsset(stem: string, extension: string, contentType: string, body: Buffer): DocsAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/docs/assets/${stem}.${hash}.${extension}`, contentType, body };
}

function loadAssets() {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const file = (name: string) => readFileSync(join(dist, name));
  return {
    stylesheet: docsAsset('swagger-ui', 'css', 'text/css; charset=utf-8', file('swagger-ui.css')),
    bundle: docsAsset('swagger-ui-bundle', 'js', 'text/javascript; charset=utf-8', file('swagger-ui-bundle.js')),
    initializer: docsAsset('init', 'js', 'text/javascript; charset=utf-8', Buffer.from(INITIALIZER)),
    icon: docsAsset('favicon', 'png', 'image/png', file('favicon-32x32.png')),
  };
}

function page(assets: ReturnType<typeof loadAssets>): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil API reference</title>
<link rel="icon" type="image/png" href="${assets.icon.path}">
<link rel="stylesheet" href="${assets.stylesheet.path}">
</head>
<body>
<noscript><p>The API reference needs JavaScript. The document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="${assets.bundle.path}"></script>
<script src="${assets.initializer.path}"></script>
</body>
</html>
`;
}

function protect(res: Response): void {
  res.setHeader('Content-Security-Policy', API_REFERENCE_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

export function apiReferenceRouter(): Router {
  const assets = loadAssets();
  const html = page(assets);
  const router = Router();
  router.get('/docs', (_req, res) => {
    (res.locals as Partial<RequestContext>).route = 'docs';
    protect(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/html; charset=utf-8').send(html);
  });
  for (const asset of Object.values(assets)) {
    router.get(asset.path, (_req, res) => {
      (res.locals as Partial<RequestContext>).route = 'docs-asset';
      protect(res);
      // The name carries a hash of the content: a new version is a new name.
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.type(asset.contentType).send(asset.body);
    });
  }
  return router;
}
