/**
 * The Target resource and its rules (SPEC.md, Targets): what may change,
 * what may be deleted, and how settings are merged on update.
 */
import { InvalidRequestError } from '../errors.js';
import type { HealthScore } from './health-score.js';
import type { ZapSettingsInputValue, ZapSettingsValue } from '../scanners/zap-settings.js';

export const TARGET_ORIGINS = ['MANUAL', 'INTERNAL_SCANNER', 'CLOUD_PROVIDER', 'CODE_INTEGRATION', 'UPLOADED_RESULTS'] as const;
export type TargetOrigin = (typeof TARGET_ORIGINS)[number];

export interface Target {
  id: string;
  accountId: string;
  target: string;
  label: string;
  tags: string[];
  healthScore: HealthScore;
  authSeleniumFile: string | undefined;
  /** File name of the attached API definition (OpenAPI or Swagger); absent when none. */
  openApiFile?: string | undefined;
  zap: ZapSettingsValue;
  origin: TargetOrigin;
  createdAt: string;
  lastScannedAt: string | null;
  /** Best operating-system match an uploaded port-scanner file reported; absent when none did. */
  os?: string | undefined;
  /** Host name an uploaded scanner file reported for the target; absent when none did. */
  hostname?: string | undefined;
}

/** What a client sends to create a target (SPEC.md, POST /v1/targets); the wire schema checks against it. */
export interface TargetInput {
  target: string;
  label?: string | undefined;
  tags?: string[] | undefined;
  scanner_settings?: { zap?: ZapSettingsInputValue | undefined } | undefined;
}

/** What a client sends to change a target (SPEC.md, PATCH /v1/targets/{id}); the wire schema checks against it. */
export type TargetUpdateInput = Omit<TargetInput, 'target'>;

export const DEFAULT_ZAP_SETTINGS: Readonly<ZapSettingsValue> = Object.freeze({
  included_domains: [],
  excluded_domains: [],
  excluded_urls: [],
  seed_urls: [],
  anti_csrf_tokens: [],
  scan_discovered_subdomains: false,
  scan_third_party_javascript: false,
  headers: [],
  cookies: [],
});

const CRAWL_KEYS = [
  'included_domains',
  'excluded_domains',
  'excluded_urls',
  'seed_urls',
  'anti_csrf_tokens',
  'scan_discovered_subdomains',
  'scan_third_party_javascript',
] as const satisfies ReadonlyArray<keyof ZapSettingsValue>;

/** Lowercase, trimmed, without duplicates, in the order given. */
export function normaliseTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const tag of tags) {
    const normalised = tag.trim().toLowerCase();
    if (normalised === '') throw new InvalidRequestError('tags must not be empty or blank strings');
    seen.add(normalised);
  }
  return [...seen];
}

/**
 * SPEC.md Targets rule 3: sending any crawl setting replaces all seven crawl
 * settings (those not sent take their defaults); headers and cookies are each
 * replaced only when sent.
 */
export function mergeZapSettings(current: ZapSettingsValue, input: ZapSettingsInputValue | undefined): ZapSettingsValue {
  if (input === undefined) return current;
  const sendsCrawl = CRAWL_KEYS.some((key) => input[key] !== undefined);
  const crawlBase: ZapSettingsValue = sendsCrawl ? { ...DEFAULT_ZAP_SETTINGS, ...pickCrawl(input) } : current;
  return {
    ...current,
    ...pickCrawl(crawlBase),
    headers: input.headers ?? current.headers,
    cookies: input.cookies ?? current.cookies,
  };
}

function pickCrawl(settings: ZapSettingsInputValue): Partial<ZapSettingsValue> {
  const picked: Partial<ZapSettingsValue> = {};
  for (const key of CRAWL_KEYS) {
    if (settings[key] !== undefined) Object.assign(picked, { [key]: settings[key] });
  }
  return picked;
}

export interface TargetChanges {
  label?: string;
  tags?: string[];
  zap?: ZapSettingsInputValue;
}

/** Applies an update under SPEC.md's rules 1 to 5; returns the new state without touching the input. */
export function applyTargetUpdate(target: Target, changes: TargetChanges): Target {
  if (target.origin === 'UPLOADED_RESULTS') {
    throw new InvalidRequestError(`target '${target.target}' was created from uploaded scan results and cannot be updated`);
  }
  // Rule 4: the cloud provider owns label and tags of the targets it imports.
  const ownsLabels = target.origin !== 'CLOUD_PROVIDER';
  return {
    ...target,
    label: ownsLabels && changes.label !== undefined ? changes.label : target.label,
    tags: ownsLabels && changes.tags !== undefined ? normaliseTags(changes.tags) : target.tags,
    zap: mergeZapSettings(target.zap, changes.zap),
  };
}

const DELETABLE_ORIGINS: ReadonlySet<TargetOrigin> = new Set(['MANUAL', 'INTERNAL_SCANNER']);

export function assertTargetDeletable(target: Target): void {
  if (!DELETABLE_ORIGINS.has(target.origin)) {
    const source = {
      CLOUD_PROVIDER: 'is managed by a cloud provider integration',
      CODE_INTEGRATION: 'is managed by a code integration',
      UPLOADED_RESULTS: 'was created from uploaded scan results',
    }[target.origin as 'CLOUD_PROVIDER' | 'CODE_INTEGRATION' | 'UPLOADED_RESULTS'];
    throw new InvalidRequestError(`target '${target.target}' ${source} and cannot be deleted; only manually created and internally discovered targets can`);
  }
}
