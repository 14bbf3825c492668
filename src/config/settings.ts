/**
 * The one reader of process.env (DESIGN.md). Every variable of the CONTRACT.md
 * table is validated here; a bad value stops start-up with one sentence that
 * names the variable and what is allowed.
 */
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseCidrList, type Cidr } from '../domain/targets/ipv4.js';
import { MAX_TTL_SECONDS } from '../domain/scans/scan-resource.js';
import { DEFAULT_BACKUP_SCHEDULE, parseBackupSchedule } from '../domain/backups/backup-schedule.js';
import type { ScheduleSpec } from '../domain/schedules/schedule.js';

export type Runtime = 'embedded' | 'kubernetes';
/** How the embedded runtime runs a scanner: its local program, its pinned image in docker or podman, or the first that is there. */
export type EmbeddedScanners = 'auto' | 'local' | 'container';
export type ContainerEngine = 'docker' | 'podman';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Settings {
  host: string;
  port: number;
  /** Where /metrics is served instead of `port`, so an Ingress in front of `port` never exposes it; undefined: on `port`. */
  metricsPort: number | undefined;
  dataDir: string;
  bootstrapApiKey: string | undefined;
  allowTargets: Cidr[];
  maxConcurrentScans: number;
  /** Kubernetes runtime: seconds a finished Scan's custom resource stays before Vigil deletes it (its record stays); a Scan's spec.ttlSecondsAfterFinished overrides it. */
  scanTtlAfterFinishedSeconds: number;
  webhookCaFile: string | undefined;
  runtime: Runtime;
  namespace: string;
  publicUrl: string;
  /** Kubernetes runtime: where scanner pods upload results (the in-cluster Service), which is rarely the address people use. */
  uploadUrl: string;
  smtpUrl: string | undefined;
  smtpFrom: string;
  logLevel: LogLevel;
  rateLimit: { perSecond: number; burst: number };
  /** A scanner still running after this many seconds is stopped and its Scan fails. */
  scanTimeoutSeconds: number;
  /** The largest result file a scanner pod may upload. */
  resultFileMaxBytes: number;
  /** A JSON file of scanner Job settings (images, resources, service account, scheduling) for the kubernetes runtime. */
  jobSettingsFile: string | undefined;
  /** Embedded runtime: local programs, containers, or local first and containers for what is missing. */
  embeddedScanners: EmbeddedScanners;
  /** Embedded runtime: the container engine to run scanner images with; undefined means docker, else podman, whichever is on PATH. */
  containerEngine: ContainerEngine | undefined;
  /** The directories searched for scanner programs and the container engine (PATH). */
  searchPath: string;
  /** Embedded runtime: the nuclei-templates directory NUCLEI scans run (never downloaded at scan time). */
  nucleiTemplatesDir: string;
  /** The Chromium binary login recordings are replayed in (embedded runtime, and `vigil login-replay` in Jobs). */
  chromiumPath: string;
  /** Scheduled backups made by `serve` itself (VIGIL_BACKUP_DIR); undefined when it makes none. */
  backup: BackupSettings | undefined;
}

export interface BackupSettings {
  /** Each backup goes into a timestamped folder here. */
  dir: string;
  schedule: ScheduleSpec;
  /** Backups kept; the oldest beyond go. */
  keep: number;
}

export class SettingsError extends Error {}

export type Env = Record<string, string | undefined>;

const optional = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * Paths are made absolute once, here, against the directory `vigil` was
 * started in (CONTRACT.md): scanners run with their work directory as the
 * working directory, so a relative path handed to them would point elsewhere.
 */
const absolutePath = (value: string | undefined) => (value === undefined ? undefined : resolve(value));

function integer(name: string, min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be a whole number from ${min} to ${max}`);
}

function oneOf<const T extends string>(name: string, values: readonly [T, ...T[]]) {
  return z.enum(values, { message: `${name} must be one of: ${values.join(', ')}` });
}

const smtpUrl = z
  .string()
  .refine((value) => /^smtps?:\/\/[^/]+/.test(value) && URL.canParse(value), 'VIGIL_SMTP_URL must be an smtp:// or smtps:// URL, for example smtp://127.0.0.1:2525');

const email = z.string().regex(/^[^\s@<>]+@[^\s@<>]+$/, 'VIGIL_SMTP_FROM must be an e-mail address, for example vigil@example.com');

const namespace = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'VIGIL_NAMESPACE must be a Kubernetes namespace name (lowercase letters, digits and -, at most 63 characters)');

function field<T>(name: string, schema: z.ZodType<T>, raw: string): T {
  const result = schema.safeParse(raw);
  if (!result.success) {
    throw new SettingsError(result.error.issues[0]?.message ?? `${name} is invalid`);
  }
  return result.data;
}

function allowTargets(raw: string | undefined): Cidr[] {
  try {
    return parseCidrList(raw ?? '');
  } catch (error) {
    throw new SettingsError(`VIGIL_ALLOW_TARGETS must be comma-separated IPv4 CIDRs such as 127.0.0.0/8: ${(error as Error).message}`);
  }
}

function httpUrl(name: string, raw: string, example: string): string {
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new SettingsError(`${name} must be an http:// or https:// URL, for example ${example}`);
  }
  return raw.replace(/\/+$/, '');
}

function publicUrl(raw: string | undefined, host: string, port: number): string {
  if (raw === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return httpUrl('VIGIL_PUBLIC_URL', raw, 'https://vigil.example.com');
}

function metricsPort(raw: string | undefined, port: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = field('VIGIL_METRICS_PORT', integer('VIGIL_METRICS_PORT', 1, 65535), raw);
  if (value === port && port !== 0) throw new SettingsError(`VIGIL_METRICS_PORT must differ from VIGIL_PORT (${port}); leave it unset to serve /metrics on VIGIL_PORT`);
  return value;
}

function backupSettings(env: Env): BackupSettings | undefined {
  const dir = optional(env.VIGIL_BACKUP_DIR);
  const schedule = optional(env.VIGIL_BACKUP_SCHEDULE);
  const keep = optional(env.VIGIL_BACKUP_KEEP);
  if (dir === undefined) {
    if (schedule !== undefined || keep !== undefined) throw new SettingsError('VIGIL_BACKUP_SCHEDULE and VIGIL_BACKUP_KEEP need VIGIL_BACKUP_DIR, the folder backups are written to');
    return undefined;
  }
  let spec: ScheduleSpec;
  try {
    spec = parseBackupSchedule(schedule ?? DEFAULT_BACKUP_SCHEDULE);
  } catch (error) {
    throw new SettingsError((error as Error).message);
  }
  return { dir: resolve(dir), schedule: spec, keep: field('VIGIL_BACKUP_KEEP', integer('VIGIL_BACKUP_KEEP', 1, 1000), keep ?? '7') };
}

/** Reads and validates the environment. Throws SettingsError with one sentence on the first bad value. */
export function loadSettings(env: Env = process.env): Settings {
  const host = optional(env.VIGIL_HOST) ?? '127.0.0.1';
  const port = field('VIGIL_PORT', integer('VIGIL_PORT', 0, 65535), optional(env.VIGIL_PORT) ?? '8080');
  const people = publicUrl(optional(env.VIGIL_PUBLIC_URL), host, port);
  const uploadUrl = optional(env.VIGIL_UPLOAD_URL);
  return {
    host,
    port,
    metricsPort: metricsPort(optional(env.VIGIL_METRICS_PORT), port),
    dataDir: resolve(optional(env.VIGIL_DATA_DIR) ?? './data'),
    bootstrapApiKey: optional(env.VIGIL_BOOTSTRAP_API_KEY),
    allowTargets: allowTargets(optional(env.VIGIL_ALLOW_TARGETS)),
    maxConcurrentScans: field('VIGIL_MAX_CONCURRENT_SCANS', integer('VIGIL_MAX_CONCURRENT_SCANS', 1, 10_000), optional(env.VIGIL_MAX_CONCURRENT_SCANS) ?? '10'),
    scanTtlAfterFinishedSeconds: field('VIGIL_SCAN_TTL_AFTER_FINISHED', integer('VIGIL_SCAN_TTL_AFTER_FINISHED', 0, MAX_TTL_SECONDS), optional(env.VIGIL_SCAN_TTL_AFTER_FINISHED) ?? String(7 * 24 * 3600)),
    webhookCaFile: absolutePath(optional(env.VIGIL_WEBHOOK_CA_FILE)),
    runtime: field('VIGIL_RUNTIME', oneOf('VIGIL_RUNTIME', ['embedded', 'kubernetes']), optional(env.VIGIL_RUNTIME) ?? 'embedded'),
    namespace: field('VIGIL_NAMESPACE', namespace, optional(env.VIGIL_NAMESPACE) ?? 'vigil'),
    publicUrl: people,
    uploadUrl: uploadUrl === undefined ? people : httpUrl('VIGIL_UPLOAD_URL', uploadUrl, 'http://vigil.vigil.svc:8080'),
    smtpUrl: optional(env.VIGIL_SMTP_URL) === undefined ? undefined : field('VIGIL_SMTP_URL', smtpUrl, optional(env.VIGIL_SMTP_URL)!),
    smtpFrom: field('VIGIL_SMTP_FROM', email, optional(env.VIGIL_SMTP_FROM) ?? 'vigil@localhost'),
    logLevel: field('LOG_LEVEL', oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), optional(env.LOG_LEVEL) ?? 'info'),
    jobSettingsFile: absolutePath(optional(env.VIGIL_JOB_SETTINGS_FILE)),
    embeddedScanners: field('VIGIL_EMBEDDED_SCANNERS', oneOf('VIGIL_EMBEDDED_SCANNERS', ['auto', 'local', 'container']), optional(env.VIGIL_EMBEDDED_SCANNERS) ?? 'auto'),
    containerEngine:
      optional(env.VIGIL_CONTAINER_ENGINE) === undefined ? undefined : field('VIGIL_CONTAINER_ENGINE', oneOf('VIGIL_CONTAINER_ENGINE', ['docker', 'podman']), optional(env.VIGIL_CONTAINER_ENGINE)!),
    searchPath: env.PATH ?? '',
    // Absolute: nuclei runs in its scan's work directory, where a relative path would point elsewhere.
    nucleiTemplatesDir: resolve(optional(env.VIGIL_NUCLEI_TEMPLATES) ?? join(optional(env.VIGIL_DATA_DIR) ?? './data', 'nuclei-templates')),
    chromiumPath: resolve(optional(env.VIGIL_CHROMIUM) ?? '/usr/bin/chromium'),
    resultFileMaxBytes: field('VIGIL_RESULT_FILE_MAX_MB', integer('VIGIL_RESULT_FILE_MAX_MB', 1, 4096), optional(env.VIGIL_RESULT_FILE_MAX_MB) ?? '256') * 1024 * 1024,
    scanTimeoutSeconds: field('VIGIL_SCAN_TIMEOUT_SECONDS', integer('VIGIL_SCAN_TIMEOUT_SECONDS', 10, 7 * 24 * 3600), optional(env.VIGIL_SCAN_TIMEOUT_SECONDS) ?? '7200'),
    backup: backupSettings(env),
    rateLimit: {
      perSecond: field('VIGIL_RATE_LIMIT_PER_SECOND', integer('VIGIL_RATE_LIMIT_PER_SECOND', 1, 1_000_000), optional(env.VIGIL_RATE_LIMIT_PER_SECOND) ?? '50'),
      burst: field('VIGIL_RATE_LIMIT_BURST', integer('VIGIL_RATE_LIMIT_BURST', 1, 1_000_000), optional(env.VIGIL_RATE_LIMIT_BURST) ?? '200'),
    },
  };
}

/**
 * The environment a scanner that sets variables of its own (nuclei's
 * HOSTS_PATH, ZAP's JAVA_TOOL_OPTIONS) starts from: the service's own, as
 * every other scanner inherits it.
 */
export function scannerEnvironment(): Record<string, string | undefined> {
  return { ...process.env };
}

/** What `vigil login-replay` (the login step of a scanner Job) reads from its environment. */
export interface LoginReplaySettings {
  allowTargets: Cidr[];
  chromiumPath: string;
}

export function loadLoginReplaySettings(env: Env = process.env): LoginReplaySettings {
  return { allowTargets: allowTargets(optional(env.VIGIL_ALLOW_TARGETS)), chromiumPath: resolve(optional(env.VIGIL_CHROMIUM) ?? '/usr/bin/chromium') };
}

/** What `vigil upload-result` reads from its environment (set by the scanner Job from a Secret). */
export interface UploadSettings {
  token: string;
  /** The files to upload, relative to the output directory; inputs in the same directory are never sent. */
  resultFiles: string[];
  /** VIGIL_UPLOAD_DEADLINE: when the Job's activeDeadlineSeconds ends, the last moment an upload is worth trying; undefined when run by hand. */
  deadline: Date | undefined;
}

export function loadUploadSettings(env: Env = process.env): UploadSettings {
  const token = optional(env.VIGIL_UPLOAD_TOKEN);
  if (token === undefined) throw new SettingsError('VIGIL_UPLOAD_TOKEN must hold the scan\'s upload token');
  const files = (optional(env.VIGIL_RESULT_FILES) ?? '').split(',').map((file) => file.trim()).filter(Boolean);
  if (files.length === 0) throw new SettingsError('VIGIL_RESULT_FILES must list the result files to upload, comma-separated');
  const deadline = optional(env.VIGIL_UPLOAD_DEADLINE);
  if (deadline !== undefined && !(/^\d{4}-\d\d-\d\dT/.test(deadline) && Number.isFinite(Date.parse(deadline)))) {
    throw new SettingsError('VIGIL_UPLOAD_DEADLINE must be an ISO 8601 time such as 2026-11-28T13:20:00.000Z');
  }
  return { token, resultFiles: files, deadline: deadline === undefined ? undefined : new Date(deadline) };
}

/** Where `vigil scanner openvas` reaches the Greenbone manager (gvmd) over GMP. */
export type GmpEndpoint = { kind: 'tls'; host: string; port: number } | { kind: 'unix'; path: string };

/** What `vigil scanner openvas` reads: the manager, its login, and the objects a scan task uses. */
export interface OpenVasSettings {
  endpoint: GmpEndpoint;
  /** As written in VIGIL_OPENVAS_GMP, for messages. */
  endpointText: string;
  username: string;
  password: string;
  /** A PEM file with the CA that signed gvmd's certificate; without it, the system's trusted CAs. */
  caFile: string | undefined;
  scanConfigId: string;
  scannerId: string;
  portListId: string;
}

/** Greenbone's built-in objects, present on every installation. */
export const OPENVAS_DEFAULTS = {
  /** Scan config "Full and fast". */
  scanConfigId: 'daba56c8-73ec-11df-a475-002264764cea',
  /** Scanner "OpenVAS Default". */
  scannerId: '08b69003-5fc2-4037-a479-93b440211c73',
  /** Port list "All IANA assigned TCP". */
  portListId: '33d0cd82-57c6-11e1-8ed1-406186ea4fc5',
} as const;

const GREENBONE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function listOfNames(names: string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

function gmpEndpoint(raw: string): GmpEndpoint {
  const invalid = new SettingsError(`VIGIL_OPENVAS_GMP must be tls://host:9390 or unix:///path/to/gvmd.sock`);
  if (!URL.canParse(raw)) throw invalid;
  const url = new URL(raw);
  if (url.protocol === 'unix:' && url.host === '' && url.pathname.length > 1 && url.search === '' && url.hash === '') {
    return { kind: 'unix', path: decodeURIComponent(url.pathname) };
  }
  const onlyHostAndPort = url.username === '' && url.password === '' && ['', '/'].includes(url.pathname) && url.search === '' && url.hash === '';
  if (url.protocol === 'tls:' && url.hostname !== '' && url.port !== '0' && onlyHostAndPort) {
    return { kind: 'tls', host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? 9390 : Number(url.port) };
  }
  throw invalid;
}

function greenboneId(name: string, what: string, raw: string | undefined, fallback: string): string {
  if (raw === undefined) return fallback;
  if (!GREENBONE_ID.test(raw)) throw new SettingsError(`${name} must be the UUID of a ${what}, for example ${fallback}`);
  return raw.toLowerCase();
}

/**
 * Reads the OpenVAS (Greenbone) connection. Throws SettingsError with one
 * sentence naming the variables to set; secrets never appear in messages.
 */
export function loadOpenVasSettings(env: Env = process.env): OpenVasSettings {
  const gmp = optional(env.VIGIL_OPENVAS_GMP);
  const username = optional(env.VIGIL_OPENVAS_USERNAME);
  const password = env.VIGIL_OPENVAS_PASSWORD === undefined || env.VIGIL_OPENVAS_PASSWORD === '' ? undefined : env.VIGIL_OPENVAS_PASSWORD;
  const missing = [
    ...(gmp === undefined ? ['VIGIL_OPENVAS_GMP (tls://host:9390 or unix:///path/gvmd.sock)'] : []),
    ...(username === undefined ? ['VIGIL_OPENVAS_USERNAME'] : []),
    ...(password === undefined ? ['VIGIL_OPENVAS_PASSWORD'] : []),
  ];
  if (missing.length > 0) throw new SettingsError(`OPENVAS scans need a Greenbone manager: set ${listOfNames(missing)}`);
  return {
    endpoint: gmpEndpoint(gmp!),
    endpointText: gmp!,
    username: username!,
    password: password!,
    caFile: absolutePath(optional(env.VIGIL_OPENVAS_CA_FILE)),
    scanConfigId: greenboneId('VIGIL_OPENVAS_SCAN_CONFIG', 'scan config', optional(env.VIGIL_OPENVAS_SCAN_CONFIG), OPENVAS_DEFAULTS.scanConfigId),
    scannerId: greenboneId('VIGIL_OPENVAS_SCANNER', 'scanner', optional(env.VIGIL_OPENVAS_SCANNER), OPENVAS_DEFAULTS.scannerId),
    portListId: greenboneId('VIGIL_OPENVAS_PORT_LIST', 'port list', optional(env.VIGIL_OPENVAS_PORT_LIST), OPENVAS_DEFAULTS.portListId),
  };
}

/** What `vigil scanner nessus` reads: the Nessus (or Tenable) REST API and its API keys. */
export interface NessusSettings {
  /** https://host:8834, without a trailing slash. */
  url: string;
  accessKey: string;
  secretKey: string;
  /** The scan template; undefined means "look up the Basic Network Scan template by its name 'basic'". */
  templateUuid: string | undefined;
}

function nessusUrl(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new SettingsError('VIGIL_NESSUS_URL must be an https:// URL such as https://nessus.example.com:8834');
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Reads the Nessus connection. Throws SettingsError with one sentence naming
 * the variables to set; the keys never appear in messages.
 */
export function loadNessusSettings(env: Env = process.env): NessusSettings {
  const url = optional(env.VIGIL_NESSUS_URL);
  const accessKey = optional(env.VIGIL_NESSUS_ACCESS_KEY);
  const secretKey = optional(env.VIGIL_NESSUS_SECRET_KEY);
  const missing = [
    ...(url === undefined ? ['VIGIL_NESSUS_URL (https://host:8834)'] : []),
    ...(accessKey === undefined ? ['VIGIL_NESSUS_ACCESS_KEY'] : []),
    ...(secretKey === undefined ? ['VIGIL_NESSUS_SECRET_KEY'] : []),
  ];
  if (missing.length > 0) throw new SettingsError(`NESSUS scans need a Nessus server: set ${listOfNames(missing)}`);
  // The keys go into an HTTP header: a stray ';' or line break would forge or break it.
  for (const [name, value] of [['VIGIL_NESSUS_ACCESS_KEY', accessKey!], ['VIGIL_NESSUS_SECRET_KEY', secretKey!]] as const) {
    if (!/^[\x21-\x7e]+$/.test(value) || value.includes(';')) throw new SettingsError(`${name} must be an API key of printable characters without ';'`);
  }
  const template = optional(env.VIGIL_NESSUS_TEMPLATE_UUID);
  if (template !== undefined && !/^[0-9a-f-]{8,128}$/i.test(template)) {
    throw new SettingsError('VIGIL_NESSUS_TEMPLATE_UUID must be the uuid of a Nessus scan template (hexadecimal digits and dashes)');
  }
  return { url: nessusUrl(url!), accessKey: accessKey!, secretKey: secretKey!, templateUuid: template };
}
