/**
 * The one reader of process.env (DESIGN.md). Every variable of the CONTRACT.md
 * table is validated here; a bad value stops start-up with one sentence that
 * names the variable and what is allowed.
 */
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseCidrList, type Cidr } from '../domain/targets/ipv4.js';
import { parseBackupSchedule } from '../domain/backups/backup-schedule.js';
import type { ScheduleSpec } from '../domain/schedules/schedule.js';
import { settingDefinition, type SettingName, type WholeNumberBound } from './setting-definitions.js';

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
  /**
   * Kubernetes runtime: seconds a finished Scan's custom resource stays before Vigil deletes it (its record stays); a Scan's
   * spec.ttlSecondsAfterFinished overrides it.
   */
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

/** The variable's value, or its fallback from the table (setting-definitions.ts) when it is unset or blank. */
const valueOf = (env: Env, name: SettingName): string | undefined => optional(env[name]) ?? settingDefinition(name).fallback;

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

/** A whole-number setting within the bound the table gives it; undefined when it is unset and has no fallback. */
function wholeNumber(env: Env, name: SettingName): number | undefined {
  const raw = valueOf(env, name);
  const { min, max } = settingDefinition(name).bound as WholeNumberBound;
  return raw === undefined ? undefined : field(name, integer(name, min, max), raw);
}

/** A setting that takes one of the words the table lists; undefined when it is unset and has no fallback. */
function word<const T extends string>(env: Env, name: SettingName): T | undefined {
  const raw = valueOf(env, name);
  return raw === undefined ? undefined : field(name, oneOf(name, settingDefinition(name).bound as readonly [T, ...T[]]), raw);
}

const smtpUrl = z
  .string()
  .refine(
    (value) => /^smtps?:\/\/[^/]+/.test(value) && URL.canParse(value),
    'VIGIL_SMTP_URL must be an smtp:// or smtps:// URL, for example smtp://127.0.0.1:46025',
  );

const email = z.string().regex(/^[^\s@<>]+@[^\s@<>]+$/, 'VIGIL_SMTP_FROM must be an e-mail address, for example vigil@example.com');

const namespace = z
  .string()
  .regex(
    /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
    'VIGIL_NAMESPACE must be a Kubernetes namespace name (lowercase letters, digits and -, at most 63 characters)',
  );

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

function metricsPort(env: Env, port: number): number | undefined {
  const value = wholeNumber(env, 'VIGIL_METRICS_PORT');
  if (value === undefined) return undefined;
  if (value === port && port !== 0)
    throw new SettingsError(`VIGIL_METRICS_PORT must differ from VIGIL_PORT (${port}); leave it unset to serve /metrics on VIGIL_PORT`);
  return value;
}

function backupSettings(env: Env): BackupSettings | undefined {
  const dir = optional(env.VIGIL_BACKUP_DIR);
  const schedule = optional(env.VIGIL_BACKUP_SCHEDULE);
  const keep = optional(env.VIGIL_BACKUP_KEEP);
  if (dir === undefined) {
    if (schedule !== undefined || keep !== undefined)
      throw new SettingsError('VIGIL_BACKUP_SCHEDULE and VIGIL_BACKUP_KEEP need VIGIL_BACKUP_DIR, the folder backups are written to');
    return undefined;
  }
  let spec: ScheduleSpec;
  try {
    spec = parseBackupSchedule(valueOf(env, 'VIGIL_BACKUP_SCHEDULE')!);
  } catch (error) {
    throw new SettingsError((error as Error).message);
  }
  return { dir: resolve(dir), schedule: spec, keep: wholeNumber(env, 'VIGIL_BACKUP_KEEP')! };
}

/** Reads and validates the environment. Throws SettingsError with one sentence on the first bad value. */
export function loadSettings(env: Env = process.env): Settings {
  const host = valueOf(env, 'VIGIL_HOST')!;
  const port = wholeNumber(env, 'VIGIL_PORT')!;
  const people = publicUrl(optional(env.VIGIL_PUBLIC_URL), host, port);
  const uploadUrl = optional(env.VIGIL_UPLOAD_URL);
  const smtp = optional(env.VIGIL_SMTP_URL);
  return {
    host,
    port,
    metricsPort: metricsPort(env, port),
    dataDir: resolve(valueOf(env, 'VIGIL_DATA_DIR')!),
    bootstrapApiKey: optional(env.VIGIL_BOOTSTRAP_API_KEY),
    allowTargets: allowTargets(optional(env.VIGIL_ALLOW_TARGETS)),
    maxConcurrentScans: wholeNumber(env, 'VIGIL_MAX_CONCURRENT_SCANS')!,
    scanTtlAfterFinishedSeconds: wholeNumber(env, 'VIGIL_SCAN_TTL_AFTER_FINISHED')!,
    webhookCaFile: absolutePath(optional(env.VIGIL_WEBHOOK_CA_FILE)),
    runtime: word<Runtime>(env, 'VIGIL_RUNTIME')!,
    namespace: field('VIGIL_NAMESPACE', namespace, valueOf(env, 'VIGIL_NAMESPACE')!),
    publicUrl: people,
    uploadUrl: uploadUrl === undefined ? people : httpUrl('VIGIL_UPLOAD_URL', uploadUrl, 'http://vigil.vigil.svc:8080'),
    smtpUrl: smtp === undefined ? undefined : field('VIGIL_SMTP_URL', smtpUrl, smtp),
    smtpFrom: field('VIGIL_SMTP_FROM', email, valueOf(env, 'VIGIL_SMTP_FROM')!),
    logLevel: word<LogLevel>(env, 'LOG_LEVEL')!,
    jobSettingsFile: absolutePath(optional(env.VIGIL_JOB_SETTINGS_FILE)),
    embeddedScanners: word<EmbeddedScanners>(env, 'VIGIL_EMBEDDED_SCANNERS')!,
    containerEngine: word<ContainerEngine>(env, 'VIGIL_CONTAINER_ENGINE'),
    searchPath: env.PATH ?? '',
    // Absolute: nuclei runs in its scan's work directory, where a relative path would point elsewhere.
    nucleiTemplatesDir: resolve(optional(env.VIGIL_NUCLEI_TEMPLATES) ?? join(valueOf(env, 'VIGIL_DATA_DIR')!, 'nuclei-templates')),
    chromiumPath: resolve(valueOf(env, 'VIGIL_CHROMIUM')!),
    resultFileMaxBytes: wholeNumber(env, 'VIGIL_RESULT_FILE_MAX_MB')! * 1024 * 1024,
    scanTimeoutSeconds: wholeNumber(env, 'VIGIL_SCAN_TIMEOUT_SECONDS')!,
    backup: backupSettings(env),
    rateLimit: { perSecond: wholeNumber(env, 'VIGIL_RATE_LIMIT_PER_SECOND')!, burst: wholeNumber(env, 'VIGIL_RATE_LIMIT_BURST')! },
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

/** NODE_OPTIONS as node was started with it: `vigil serve` reads its young generation's size there (src/main/heap-growth.ts). */
export function nodeOptions(env: Env = process.env): string {
  return env.NODE_OPTIONS ?? '';
}

/** What `vigil login-replay` (the login step of a scanner Job) reads from its environment. */
export interface LoginReplaySettings {
  allowTargets: Cidr[];
  chromiumPath: string;
}

export function loadLoginReplaySettings(env: Env = process.env): LoginReplaySettings {
  return { allowTargets: allowTargets(optional(env.VIGIL_ALLOW_TARGETS)), chromiumPath: resolve(valueOf(env, 'VIGIL_CHROMIUM')!) };
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
  if (token === undefined) throw new SettingsError("VIGIL_UPLOAD_TOKEN must hold the scan's upload token");
  const files = (optional(env.VIGIL_RESULT_FILES) ?? '')
    .split(',')
    .map((file) => file.trim())
    .filter(Boolean);
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

/** One of Greenbone's objects by UUID; unset, the built-in one the table names (present on every installation). */
function greenboneId(env: Env, name: SettingName, what: string): string {
  const raw = optional(env[name]);
  const fallback = settingDefinition(name).fallback!;
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
    scanConfigId: greenboneId(env, 'VIGIL_OPENVAS_SCAN_CONFIG', 'scan config'),
    scannerId: greenboneId(env, 'VIGIL_OPENVAS_SCANNER', 'scanner'),
    portListId: greenboneId(env, 'VIGIL_OPENVAS_PORT_LIST', 'port list'),
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
  for (const [name, value] of [
    ['VIGIL_NESSUS_ACCESS_KEY', accessKey!],
    ['VIGIL_NESSUS_SECRET_KEY', secretKey!],
  ] as const) {
    if (!/^[\x21-\x7e]+$/.test(value) || value.includes(';')) throw new SettingsError(`${name} must be an API key of printable characters without ';'`);
  }
  const template = optional(env.VIGIL_NESSUS_TEMPLATE_UUID);
  if (template !== undefined && !/^[0-9a-f-]{8,128}$/i.test(template)) {
    throw new SettingsError('VIGIL_NESSUS_TEMPLATE_UUID must be the uuid of a Nessus scan template (hexadecimal digits and dashes)');
  }
  return { url: nessusUrl(url!), accessKey: accessKey!, secretKey: secretKey!, templateUuid: template };
}
