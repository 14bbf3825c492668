/**
 * A risk's evidence (its definition's additional_info) as the lines a reader
 * understands, "Port: 443", "Instance 1: GET https://… param q", instead of
 * raw JSON. One function serves the PDF, HTML and CSV reports and the
 * dashboard's risk page; each renderer escapes the text as it always has.
 */
import type { RiskDefinition } from '../risks/finding.js';

/** What the evidence is read from: a report's risk or a stored one, both carry their definition. */
export type WithDefinition = { definition: RiskDefinition };

/** Evidence is for a reader, not a dump: each value and each risk's whole evidence are cut to these lengths. */
export const EVIDENCE_LIMITS = { maxEntries: 12, maxValueChars: 600, maxReferences: 20 } as const;

export interface EvidenceLine {
  label: string;
  value: string;
}

/** Known scanner keys (nmap, ZAP, nuclei, vulners, Nessus) with their labels, in the order a reader wants them. */
const KNOWN_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['port', 'Port'],
  ['protocol', 'Protocol'],
  ['state', 'State'],
  ['service_name', 'Service'],
  ['service_product', 'Product'],
  ['service_version', 'Version'],
  ['service_extrainfo', 'Service details'],
  ['service_tunnel', 'Tunnel'],
  ['site', 'Site'],
  ['matched_at', 'Matched at'],
  ['template_id', 'Template'],
  ['matcher_name', 'Matcher'],
  ['extracted_results', 'Extracted results'],
  ['plugin_id', 'Plugin'],
  ['confidence', 'Confidence'],
  ['cwe_id', 'CWE'],
  ['instance_count', 'Instances found'],
  ['instances', 'Instance'],
  ['scripts', 'Script'],
];
const LABELS = new Map(KNOWN_KEYS);
const ORDER = new Map(KNOWN_KEYS.map(([key], index) => [key, index]));
/** Shown elsewhere in a report (CVE list, references) or only noise for a reader. */
const LEFT_OUT = new Set(['cves', 'references']);

function bounded(text: string): string {
  return text.length > EVIDENCE_LIMITS.maxValueChars ? `${text.slice(0, EVIDENCE_LIMITS.maxValueChars)}… (cut)` : text;
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/** A value as plain words: lists joined by commas, objects as "key value" pairs, never JSON braces. */
function plain(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value))
    return value
      .filter((item) => !isEmpty(item))
      .map(plain)
      .join(', ');
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .filter(([, item]) => !isEmpty(item))
      .map(([key, item]) => `${key.replace(/_/g, ' ')}: ${plain(item)}`)
      .join(' · ');
  }
  return '';
}

/** A ZAP instance reads as "GET https://shop/login · param: q · evidence: <script>". */
function instanceText(instance: unknown): string {
  if (typeof instance !== 'object' || instance === null) return plain(instance);
  const { method, uri, ...rest } = instance as Record<string, unknown>;
  const request = [method, uri]
    .filter((part) => !isEmpty(part))
    .map(plain)
    .join(' ');
  const details = plain(rest);
  return [request, details].filter((part) => part !== '').join(' · ');
}

function linesOf(key: string, value: unknown): EvidenceLine[] {
  const label = LABELS.get(key) ?? key.replace(/_/g, ' ');
  if (key === 'instances' && Array.isArray(value)) return value.map((instance, index) => ({ label: `${label} ${index + 1}`, value: instanceText(instance) }));
  if (key === 'scripts' && Array.isArray(value)) {
    return value.map((script: unknown) => {
      const { id, output } = (typeof script === 'object' && script !== null ? script : {}) as Record<string, unknown>;
      return { label: `${label} ${plain(id)}`.trim(), value: plain(output) };
    });
  }
  return [{ label, value: plain(value) }];
}

/** The risk's additional_info as ordered label/value lines, known keys first, each value and the count bounded. */
export function evidenceOf(risk: WithDefinition): EvidenceLine[] {
  return Object.entries(risk.definition.additional_info)
    .filter(([key, value]) => !LEFT_OUT.has(key) && !isEmpty(value))
    .sort(([a], [b]) => (ORDER.get(a) ?? KNOWN_KEYS.length) - (ORDER.get(b) ?? KNOWN_KEYS.length))
    .flatMap(([key, value]) => linesOf(key, value))
    .filter((line) => line.value !== '')
    .slice(0, EVIDENCE_LIMITS.maxEntries)
    .map((line) => ({ label: line.label, value: bounded(line.value) }));
}

/** The evidence on one line, "Port: 443; Service: https", for a CSV cell. */
export function evidenceLine(risk: WithDefinition): string {
  return evidenceOf(risk)
    .map((line) => `${line.label}: ${line.value}`)
    .join('; ');
}

function firstText(...values: unknown[]): string {
  for (const value of values) if (typeof value === 'string' && value !== '') return value;
  return '';
}

/** The host part of a target address: the URL's host for a web target, the address itself otherwise. */
function hostOf(address: string): string {
  if (!address.includes('://')) return address;
  try {
    return new URL(address).host.replace(/:\d+$/, '');
  } catch {
    return address;
  }
}

/**
 * Where a risk was seen: the URL for web findings (nuclei's matched-at, ZAP's
 * first instance or site), host:port/protocol for network findings (nmap,
 * vulners, Nessus, OpenVAS), '' when the scanner said neither.
 */
export function locationOf(risk: WithDefinition, targetAddress: string): string {
  const info = risk.definition.additional_info;
  const instances = Array.isArray(info['instances']) ? (info['instances'] as unknown[]) : [];
  const firstInstance = (typeof instances[0] === 'object' && instances[0] !== null ? instances[0] : {}) as Record<string, unknown>;
  const url = firstText(info['matched_at'], firstInstance['uri'], info['site'], info['url']);
  if (url !== '') return bounded(url);
  const port = info['port'];
  if (typeof port !== 'number' && !(typeof port === 'string' && /^\d+$/.test(port))) return '';
  const protocol = firstText(info['protocol']);
  return bounded(`${hostOf(targetAddress)}:${port}${protocol === '' ? '' : `/${protocol}`}`);
}
