/**
 * Bounds on what one scanner file may put into the store (issue 16, DESIGN.md
 * "bounded everything from outside"). Every parser passes its findings
 * through one FindingBudget: each text field is cut to its cap with a marker
 * saying so, and a file with more findings, or more finding text, than one
 * Scan may record is refused as it is read, so memory stays bounded whatever
 * the file claims. Lengths are UTF-16 code units, as JavaScript and the API's
 * maxLength count them; a cut never splits a surrogate pair.
 */
import { createHash } from 'node:crypto';
import { MalformedResultError } from '../domain/errors.js';
import type { Finding, FindingLocation, RiskDefinition } from '../domain/risks/finding.js';

/** The most findings one result file (and so one Scan or upload) may hold. */
export const MAX_FINDINGS_PER_SCAN = 50_000;
/** The most finding text (definitions as JSON) one result file may add, stored once in its risks and once in their events. */
const MAX_FINDING_BYTES_PER_SCAN = 64 * 1024 * 1024;

export const FIELD_CAPS = {
  title: 512,
  description: 16 * 1024,
  solution: 16 * 1024,
  cvss: 256,
  /** additional_info as a whole, serialised as JSON. */
  additionalInfo: 32 * 1024,
  /** One string inside additional_info (evidence, script output) when the whole is over its cap. */
  infoString: 2 * 1024,
  /** Items kept of one list inside additional_info when the whole is over its cap. */
  infoListItems: 50,
  /** Fingerprints longer than this are replaced by their hash: they only need to be stable. */
  fingerprint: 512,
  location: 2048,
} as const;

const TRUNCATION_MARK = '… [truncated]';

/** Cuts `text` to at most `max` code units, marker included, without splitting a surrogate pair. */
export function capField(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - TRUNCATION_MARK.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${TRUNCATION_MARK}`;
}

/** The refusal of a file with more than MAX_FINDINGS_PER_SCAN findings; a streaming parser throws it as soon as it has counted one too many. */
export function tooManyFindings(): MalformedResultError {
  return new MalformedResultError(
    `the file holds more than ${MAX_FINDINGS_PER_SCAN.toLocaleString('en')} findings, the most one scan or upload may record; split the scan`,
  );
}

/** Counts findings and their size against the per-scan caps; hands back each finding bounded. */
export class FindingBudget {
  private count = 0;
  private bytes = 0;

  /** The finding text counted so far: the length of every definition's JSON. */
  get countedBytes(): number {
    return this.bytes;
  }

  /**
   * `plainText`: the caller knows that none of the definition's strings but
   * additional_info holds a character JSON escapes (isJsonPlain() of every
   * piece they were built from), so their JSON is their length plus two
   * quotes and they need not be scanned (or, being joined from pieces,
   * flattened first). Without it they are scanned.
   */
  add(finding: Finding, plainText = false): Finding {
    this.count += 1;
    if (this.count > MAX_FINDINGS_PER_SCAN) throw tooManyFindings();
    const info = boundAdditionalInfoMeasured(finding.definition.additional_info);
    const bounded = boundFinding(finding, info.info);
    this.bytes += definitionJsonLength(bounded.definition, info.jsonLength, plainText);
    if (this.bytes > MAX_FINDING_BYTES_PER_SCAN) {
      throw new MalformedResultError(
        `the file's findings hold more than ${MAX_FINDING_BYTES_PER_SCAN / 1024 / 1024} MiB of text, the most one scan or upload may record; split the scan`,
      );
    }
    return bounded;
  }

  addAll(findings: readonly Finding[]): Finding[] {
    return findings.map((finding) => this.add(finding));
  }
}

export function boundFinding(finding: Finding, boundedInfo?: Record<string, unknown>): Finding {
  return {
    fingerprint: boundFingerprint(finding.fingerprint),
    location: boundLocation(finding.location),
    definition: boundDefinition(finding.definition, boundedInfo),
  };
}

/**
 * JSON.stringify(definition).length, with the length of its additional_info's
 * JSON already known (bounding makes it). The other members are strings, and
 * a string's JSON is its text in quotes unless it holds a character JSON
 * escapes: only those strings are serialised. Serialising the definition
 * (a copy with a stand-in for additional_info) was a tenth of an nmap parse
 * (bench/ingest.ts). test/unit/finding-bounds.test.ts compares it with
 * JSON.stringify.
 */
export function definitionJsonLength(definition: RiskDefinition, infoJsonLength: number, plainText = false): number {
  let length = 1; // {
  let members = 0;
  let sawInfo = false;
  const record = definition as unknown as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    let valueLength: number;
    if (key === 'additional_info') {
      valueLength = infoJsonLength;
      sawInfo = true;
    } else if (typeof value === 'string') {
      valueLength = plainText ? value.length + 2 : jsonStringLength(value);
    } else {
      const json = JSON.stringify(value) as string | undefined;
      if (json === undefined) continue; // undefined, a function: JSON leaves the member out
      valueLength = json.length;
    }
    length += (members === 0 ? 0 : 1) + keyJsonLength(key) + 1 + valueLength;
    members += 1;
  }
  if (!sawInfo) length += (members === 0 ? 0 : 1) + '"additional_info":'.length + infoJsonLength;
  return length + 1; // }
}

/** Characters JSON.stringify writes as an escape: the quote, the backslash, controls, and (lone) surrogates, which are checked the slow way. */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** True when `text` holds no character JSON.stringify escapes: its JSON is the text in quotes. */
export function isJsonPlain(text: string): boolean {
  return !JSON_ESCAPED.test(text);
}

/** JSON.stringify(text).length. */
function jsonStringLength(text: string): number {
  return JSON_ESCAPED.test(text) ? JSON.stringify(text).length : text.length + 2;
}

function boundFingerprint(fingerprint: string): string {
  if (fingerprint.length <= FIELD_CAPS.fingerprint) return fingerprint;
  return `sha256:${createHash('sha256').update(fingerprint).digest('hex')}`;
}

function boundLocation(location: FindingLocation): FindingLocation {
  const bounded: FindingLocation = { ...location, host: capField(location.host, FIELD_CAPS.location) };
  if (location.hostname !== undefined) bounded.hostname = capField(location.hostname, FIELD_CAPS.location);
  if (location.url !== undefined) bounded.url = capField(location.url, FIELD_CAPS.location);
  return bounded;
}

function boundDefinition(definition: RiskDefinition, boundedInfo?: Record<string, unknown>): RiskDefinition {
  return {
    ...definition,
    title: capField(definition.title, FIELD_CAPS.title),
    description: capField(definition.description, FIELD_CAPS.description),
    solution: capField(definition.solution, FIELD_CAPS.solution),
    cvss: capField(definition.cvss, FIELD_CAPS.cvss),
    additional_info: boundedInfo ?? boundAdditionalInfo(definition.additional_info),
  };
}

/**
 * additional_info within its cap: first every long string and list inside it
 * is cut; when that is still too much, only an excerpt of its JSON is kept.
 * Either way `truncated: true` says that something was left out.
 */
function boundAdditionalInfo(info: Record<string, unknown>): Record<string, unknown> {
  return boundAdditionalInfoMeasured(info).info;
}

/** boundAdditionalInfo() and the length of its JSON. */
function boundAdditionalInfoMeasured(info: Record<string, unknown>): { info: Record<string, unknown>; jsonLength: number } {
  // Measured, not serialised: the JSON itself is only needed when it is over the cap.
  const wholeLength = jsonLength(info);
  if (wholeLength <= FIELD_CAPS.additionalInfo) return { info, jsonLength: wholeLength };
  const trimmed = { ...(trimValue(info) as Record<string, unknown>), truncated: true };
  const trimmedLength = jsonLength(trimmed);
  if (trimmedLength <= FIELD_CAPS.additionalInfo) return { info: trimmed, jsonLength: trimmedLength };
  const whole = JSON.stringify(info);
  const excerpt = { truncated: true, excerpt: capField(whole.slice(0, FIELD_CAPS.additionalInfo), FIELD_CAPS.additionalInfo / 2) };
  return { info: excerpt, jsonLength: JSON.stringify(excerpt).length };
}

/**
 * JSON.stringify(value).length without building the JSON: strings are
 * scanned for characters JSON escapes, numbers and literals counted. Anything
 * but plain objects, arrays, strings, finite or not numbers, booleans and
 * null (a toJSON method, a class instance, a bigint, nesting over 32 deep, a
 * cycle) is left to JSON.stringify itself, so the answer, or the error, is
 * always its. Serialising each finding's additional_info only to take its
 * length was a tenth of an nmap parse (bench/ingest.ts).
 */
export function jsonLength(value: unknown): number {
  const length = measuredJsonLength(value, 0);
  return length >= 0 ? length : (JSON.stringify(value) as string).length;
}

/** Length of the JSON of `value`, -1 when JSON.stringify has to say, -2 for a value JSON leaves out (undefined, a function, a symbol). */
function measuredJsonLength(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return jsonStringLength(value);
    case 'number':
      return Number.isFinite(value) ? numberJsonLength(value) : 4; // NaN and Infinity are written null
    case 'boolean':
      return value ? 4 : 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return -2;
    case 'object':
      break;
    default:
      return -1; // bigint: JSON.stringify throws
  }
  if (value === null) return 4;
  if (depth >= 32) return -1;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || 'toJSON' in value) return -1;
    let length = 2 + Math.max(0, value.length - 1);
    for (let index = 0; index < value.length; index++) {
      const item = measuredJsonLength(value[index], depth + 1);
      if (item === -1) return -1;
      length += item === -2 ? 4 : item; // left-out values are written null in an array
    }
    return length;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) return -1;
  const record = value as Record<string, unknown>;
  let length = 1;
  let members = 0;
  for (const key of Object.keys(record)) {
    const item = measuredJsonLength(record[key], depth + 1);
    if (item === -1) return -1;
    if (item === -2) continue;
    length += (members === 0 ? 0 : 1) + keyJsonLength(key) + 1 + item;
    members += 1;
  }
  return length + 1;
}

/** String(value).length of a finite number, without the string for small integers (ports, counts). */
function numberJsonLength(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value >= 1e9) return String(value).length;
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  return digits;
}

/**
 * jsonStringLength of an object key, remembered: the same few keys
 * (port, protocol, vulners_id...) come with every finding. At most
 * MAX_KNOWN_KEYS keys of at most MAX_KNOWN_KEY_CHARS are kept for the life
 * of the process, whatever keys files bring, each in a string of its own
 * (a key sliced from a file's text would keep that text alive).
 */
function keyJsonLength(key: string): number {
  let length = knownKeyLengths.get(key);
  if (length === undefined) {
    length = jsonStringLength(key);
    if (knownKeyLengths.size < MAX_KNOWN_KEYS && key.length <= MAX_KNOWN_KEY_CHARS) knownKeyLengths.set(` ${key}`.slice(1), length);
  }
  return length;
}
const MAX_KNOWN_KEYS = 256;
const MAX_KNOWN_KEY_CHARS = 64;
const knownKeyLengths = new Map<string, number>();

function trimValue(value: unknown): unknown {
  if (typeof value === 'string') return capField(value, FIELD_CAPS.infoString);
  if (Array.isArray(value)) return value.slice(0, FIELD_CAPS.infoListItems).map(trimValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, FIELD_CAPS.infoListItems)
        .map(([key, item]) => [capField(key, 256), trimValue(item)]),
    );
  }
  return value;
}
