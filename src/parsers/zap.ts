import { z } from 'zod';
import { FindingBudget } from './finding-bounds.js';
import type { Finding, ResultParser, ParseResult, ThreatLevel } from '../domain/risks/finding.js';
import { JsonInput, type JsonInputOptions } from './json/json-input.js';
import { checkShape } from './json/shape-check.js';
import { htmlToPlainText, urlsInText } from './json/html-text.js';
import { capText, mergeFindingsWithSameIdentity, mostSevere } from './json/merge-findings.js';

/**
 * Parser for ZAP's "Traditional JSON" report (zap-baseline/full/api-scan -J).
 *
 * One finding per (site, alert). Fingerprint: `zap:<pluginid>:<alert name slug>@<site origin>`.
 * - pluginid, not alertRef: alertRef exists only since ZAP 2.10, so keying on
 *   it would reopen every risk when a scanner image is upgraded.
 * - the alert name: one plugin raises several distinct alerts (10049 gives
 *   'Non-Storable Content' and 'Storable and Cacheable Content' on the same
 *   site, with alertRef '10049' for both in ZAP 2.12). The cost: when ZAP
 *   renames an alert, the old risk closes and a new one opens.
 * - the site origin: a URL target is often reported as an http and an https
 *   site; they are separate listeners whose headers and fixes differ, and the
 *   finding's location.url names one site, so identity follows it.
 * ZAP lists an alert again when it fires with another risk or confidence
 * (juice-shop: '.env Information Leak' Medium and Informational); those merge
 * into one finding with the higher risk and all instances.
 */
export type ZapScanType = 'OWASP_ZAP' | 'OWASP_ZAP_ACTIVE';

const FORMAT = 'ZAP Traditional JSON report';
const MAX_INSTANCES = 50;
const MAX_EVIDENCE_CHARS = 500;
const MAX_OTHER_INFO_CHARS = 4000;

/** ZAP's riskcode to Vigil's scale; ZAP has no 'critical'. */
const THREAT_LEVEL_BY_RISKCODE: readonly ThreatLevel[] = ['INFO', 'LOW', 'MEDIUM', 'HIGH'];
const CONFIDENCE_LABELS = ['False Positive', 'Low', 'Medium', 'High', 'Confirmed'] as const;

/** ZAP writes every scalar as a string ("riskcode": "2"); other generators write numbers. */
const integerText = z.union([z.number().int(), z.string().regex(/^\s*-?\d+\s*$/)], 'must be an integer').transform(Number);
const integerBetween = (min: number, max: number) =>
  integerText.pipe(z.number().min(min, `must be ${min} to ${max}`).max(max, `must be ${min} to ${max}`));
const optionalText = z.string().optional();

const instanceSchema = z.object({
  uri: optionalText,
  method: optionalText,
  param: optionalText,
  evidence: optionalText,
});

const alertSchema = z.object({
  pluginid: z.union([z.string().min(1), z.number()]).transform(String),
  alertRef: optionalText,
  alert: optionalText,
  name: optionalText,
  riskcode: integerBetween(0, 3),
  confidence: integerBetween(0, 4).optional(),
  desc: optionalText,
  solution: optionalText,
  otherinfo: optionalText,
  reference: optionalText,
  cweid: integerText.optional(),
  wascid: integerText.optional(),
  count: integerText.optional(),
  instances: z.array(instanceSchema).optional(),
});

const siteSchema = z.object({
  '@name': z.string().min(1),
  '@host': optionalText,
  '@port': integerBetween(1, 65535).optional(),
  alerts: z.array(alertSchema).optional(),
});

const reportSchema = z.object({ site: z.array(siteSchema) });

type ZapSite = z.output<typeof siteSchema>;
type ZapAlert = z.output<typeof alertSchema>;

export function createZapParser(scanType: ZapScanType, options: JsonInputOptions = {}): ResultParser {
  const input = new JsonInput(FORMAT, options);
  return {
    write: (chunk) => input.write(chunk),
    end: (): ParseResult => {
      const report = checkShape(input.parseDocument(), reportSchema, {
        format: FORMAT,
        expected: "an object with a 'site' array",
      });
      const findings = report.site.flatMap((site) => (site.alerts ?? []).map((alert) => alertToFinding(scanType, site, alert)));
      return { findings: new FindingBudget().addAll(mergeFindingsWithSameIdentity(findings, mergeAlertFindings)), hosts: [] };
    },
  };
}

function alertToFinding(scanType: ZapScanType, site: ZapSite, alert: ZapAlert): Finding {
  const origin = siteOrigin(site['@name']);
  // Alert names are plain text in ZAP, but a crafted file could carry markup there too.
  const title = htmlToPlainText(alert.alert ?? alert.name ?? '').replace(/\n/g, ' ') || `ZAP alert ${alert.pluginid}`;
  return {
    fingerprint: `zap:${alert.pluginid}:${slug(title)}@${origin}`,
    location: siteLocation(site),
    definition: {
      scan_type: scanType,
      title,
      threat_level: THREAT_LEVEL_BY_RISKCODE[alert.riskcode] ?? 'INFO',
      description: htmlToPlainText(alert.desc ?? ''),
      solution: htmlToPlainText(alert.solution ?? ''),
      cvss: '',
      additional_info: alertAdditionalInfo(site, alert),
    },
  };
}

function alertAdditionalInfo(site: ZapSite, alert: ZapAlert): Record<string, unknown> {
  const instances = alert.instances ?? [];
  return {
    plugin_id: alert.pluginid,
    alert_ref: alert.alertRef ?? null,
    confidence: alert.confidence === undefined ? null : CONFIDENCE_LABELS[alert.confidence],
    cwe_id: positiveOrNull(alert.cweid),
    wasc_id: positiveOrNull(alert.wascid),
    references: urlsInText(htmlToPlainText(alert.reference ?? '')),
    other_info: capText(htmlToPlainText(alert.otherinfo ?? ''), MAX_OTHER_INFO_CHARS),
    // ZAP itself lists at most ~20 instances and reports the real total in `count`.
    instance_count: alert.count ?? instances.length,
    instances: instances.slice(0, MAX_INSTANCES).map(summarizeInstance),
    site: site['@name'],
  };
}

/**
 * Evidence is a literal snippet of the response (often markup) kept as data
 * for the reader, not rendered text; it is only shortened.
 */
function summarizeInstance(instance: z.output<typeof instanceSchema>): Record<string, string> {
  return {
    uri: instance.uri ?? '',
    method: instance.method ?? '',
    param: instance.param ?? '',
    evidence: capText(instance.evidence ?? '', MAX_EVIDENCE_CHARS),
  };
}

function mergeAlertFindings(kept: Finding, duplicate: Finding): Finding {
  const keptInfo = kept.definition.additional_info;
  const dupInfo = duplicate.definition.additional_info;
  const instances = [...asArray(keptInfo['instances']), ...asArray(dupInfo['instances'])];
  return {
    ...kept,
    definition: {
      ...kept.definition,
      threat_level: mostSevere(kept.definition.threat_level, duplicate.definition.threat_level),
      additional_info: {
        ...keptInfo,
        confidence: higherConfidence(keptInfo['confidence'], dupInfo['confidence']),
        instance_count: asNumber(keptInfo['instance_count']) + asNumber(dupInfo['instance_count']),
        instances: instances.slice(0, MAX_INSTANCES),
      },
    },
  };
}

function higherConfidence(a: unknown, b: unknown): unknown {
  const rank = (label: unknown) => CONFIDENCE_LABELS.findIndex((known) => known === label);
  return rank(b) > rank(a) ? b : a;
}

function siteLocation(site: ZapSite): Finding['location'] {
  const url = parseUrl(site['@name']);
  const host = site['@host']?.trim() || url?.hostname.replace(/^\[|\]$/g, '') || site['@name'];
  const port = site['@port'] ?? defaultPort(url);
  const location: Finding['location'] = { host, protocol: 'tcp' };
  if (port !== undefined) location.port = port;
  // Only a web origin becomes a URL: the dashboard links it, and a crafted file could name 'javascript:...'.
  if (url?.protocol === 'http:' || url?.protocol === 'https:') location.url = site['@name'].trim();
  return location;
}

/** scheme://host[:port] in canonical form, so 'https://Example.com:443' and 'https://example.com' are one site. */
function siteOrigin(name: string): string {
  const url = parseUrl(name);
  return url && url.origin !== 'null' ? url.origin : name.trim().toLowerCase();
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function defaultPort(url: URL | undefined): number | undefined {
  if (!url) return undefined;
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : undefined;
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'alert'
  );
}

function positiveOrNull(value: number | undefined): number | null {
  return value !== undefined && value > 0 ? value : null;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asNumber(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
