import type { Target } from '../../domain/targets/target.js';

/** The API shape of a Target (SPEC.md field names). */
export function presentTarget(target: Target) {
  return {
    id: target.id,
    target: target.target,
    label: target.label,
    tags: target.tags,
    health_score: target.healthScore,
    ...(target.authSeleniumFile === undefined ? {} : { auth_selenium_file: target.authSeleniumFile }),
    ...(target.openApiFile === undefined ? {} : { openapi_file: target.openApiFile }),
    scanner_settings: { zap: target.zap },
    origin: target.origin,
    created_at: target.createdAt,
    last_scanned_at: target.lastScannedAt,
    ...(target.os === undefined ? {} : { os: target.os }),
    ...(target.hostname === undefined ? {} : { hostname: target.hostname }),
  };
}
