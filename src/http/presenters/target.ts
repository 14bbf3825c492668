import type { TargetListRow } from '../../app/ports.js';
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

const text = JSON.stringify;

/**
 * The same shape as presentTarget, written as JSON text straight from a list
 * row: the stored tags and zap settings are already JSON (written by
 * JSON.stringify in the store) and are spliced in as they are. A test keeps
 * the two presenters equal.
 */
export function renderTargetJson(row: TargetListRow): string {
  return (
    `{"id":${text(row.id)},"target":${text(row.target)},"label":${text(row.label)},"tags":${row.tagsJson},` +
    `"health_score":{"score":${row.healthScore},"grade":${text(row.healthGrade)}},` +
    (row.authSeleniumFile === null ? '' : `"auth_selenium_file":${text(row.authSeleniumFile)},`) +
    (row.openApiFile === null ? '' : `"openapi_file":${text(row.openApiFile)},`) +
    `"scanner_settings":{"zap":${row.zapSettingsJson}},"origin":${text(row.origin)},` +
    `"created_at":${text(row.createdAt)},"last_scanned_at":${row.lastScannedAt === null ? 'null' : text(row.lastScannedAt)}` +
    (row.os === null ? '' : `,"os":${text(row.os)}`) +
    (row.hostname === null ? '' : `,"hostname":${text(row.hostname)}`) +
    '}'
  );
}
