/**
 * Static assets under /dashboard/assets. Each name carries a hash of its
 * content, so a browser may keep it for a year and still never shows a stale
 * one after an upgrade.
 */
import { createHash } from 'node:crypto';
import { ICON_SVG } from './icon.js';
import { STYLESHEET } from './stylesheet.js';

export interface Asset {
  path: string;
  contentType: string;
  body: string;
}

function asset(stem: string, extension: string, contentType: string, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/dashboard/assets/${stem}.${hash}.${extension}`, contentType, body };
}

export const ASSETS = {
  stylesheet: asset('dashboard', 'css', 'text/css; charset=utf-8', STYLESHEET),
  icon: asset('icon', 'svg', 'image/svg+xml', ICON_SVG),
} as const;
