/**
 * The one reader of process.env (DESIGN.md). Every variable of the CONTRACT.md
 * table is validated here; a bad value stops start-up with one sentence that
 * names the variable and what is allowed.
 */
import { z } from 'zod';
import { parseCidrList, type Cidr } from '../domain/targets/ipv4.js';

export type Runtime = 'embedded' | 'kubernetes';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Settings {
  host: string;
  port: number;
  dataDir: string;
  bootstrapApiKey: string | undefined;
  allowTargets: Cidr[];
  maxConcurrentScans: number;
  webhookCaFile: string | undefined;
  runtime: Runtime;
  namespace: string;
  publicUrl: string;
  smtpUrl: string | undefined;
  smtpFrom: string;
  logLevel: LogLevel;
  rateLimit: { perSecond: number; burst: number };
  /** A scanner still running after this many seconds is stopped and its Scan fails. */
  scanTimeoutSeconds: number;
  /** The largest result file a scanner pod may upload. */
  resultFileMaxBytes: number;
}

export class SettingsError extends Error {}

type Env = Record<string, string | undefined>;

const optional = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

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

function publicUrl(raw: string | undefined, host: string, port: number): string {
  if (raw === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new SettingsError('VIGIL_PUBLIC_URL must be an http:// or https:// URL, for example https://vigil.example.com');
  }
  return raw.replace(/\/+$/, '');
}

/** Reads and validates the environment. Throws SettingsError with one sentence on the first bad value. */
export function loadSettings(env: Env = process.env): Settings {
  const host = optional(env.VIGIL_HOST) ?? '127.0.0.1';
  const port = field('VIGIL_PORT', integer('VIGIL_PORT', 0, 65535), optional(env.VIGIL_PORT) ?? '8080');
  return {
    host,
    port,
    dataDir: optional(env.VIGIL_DATA_DIR) ?? './data',
    bootstrapApiKey: optional(env.VIGIL_BOOTSTRAP_API_KEY),
    allowTargets: allowTargets(optional(env.VIGIL_ALLOW_TARGETS)),
    maxConcurrentScans: field('VIGIL_MAX_CONCURRENT_SCANS', integer('VIGIL_MAX_CONCURRENT_SCANS', 1, 10_000), optional(env.VIGIL_MAX_CONCURRENT_SCANS) ?? '10'),
    webhookCaFile: optional(env.VIGIL_WEBHOOK_CA_FILE),
    runtime: field('VIGIL_RUNTIME', oneOf('VIGIL_RUNTIME', ['embedded', 'kubernetes']), optional(env.VIGIL_RUNTIME) ?? 'embedded'),
    namespace: field('VIGIL_NAMESPACE', namespace, optional(env.VIGIL_NAMESPACE) ?? 'vigil'),
    publicUrl: publicUrl(optional(env.VIGIL_PUBLIC_URL), host, port),
    smtpUrl: optional(env.VIGIL_SMTP_URL) === undefined ? undefined : field('VIGIL_SMTP_URL', smtpUrl, optional(env.VIGIL_SMTP_URL)!),
    smtpFrom: field('VIGIL_SMTP_FROM', email, optional(env.VIGIL_SMTP_FROM) ?? 'vigil@localhost'),
    logLevel: field('LOG_LEVEL', oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), optional(env.LOG_LEVEL) ?? 'info'),
    resultFileMaxBytes: field('VIGIL_RESULT_FILE_MAX_MB', integer('VIGIL_RESULT_FILE_MAX_MB', 1, 4096), optional(env.VIGIL_RESULT_FILE_MAX_MB) ?? '256') * 1024 * 1024,
    scanTimeoutSeconds: field('VIGIL_SCAN_TIMEOUT_SECONDS', integer('VIGIL_SCAN_TIMEOUT_SECONDS', 10, 7 * 24 * 3600), optional(env.VIGIL_SCAN_TIMEOUT_SECONDS) ?? '7200'),
    rateLimit: {
      perSecond: field('VIGIL_RATE_LIMIT_PER_SECOND', integer('VIGIL_RATE_LIMIT_PER_SECOND', 1, 1_000_000), optional(env.VIGIL_RATE_LIMIT_PER_SECOND) ?? '50'),
      burst: field('VIGIL_RATE_LIMIT_BURST', integer('VIGIL_RATE_LIMIT_BURST', 1, 1_000_000), optional(env.VIGIL_RATE_LIMIT_BURST) ?? '200'),
    },
  };
}

/** What `vigil upload-result` reads from its environment (set by the scanner Job from a Secret). */
export interface UploadSettings {
  token: string;
  /** The files to upload, relative to the output directory; inputs in the same directory are never sent. */
  resultFiles: string[];
}

export function loadUploadSettings(env: Env = process.env): UploadSettings {
  const token = optional(env.VIGIL_UPLOAD_TOKEN);
  if (token === undefined) throw new SettingsError('VIGIL_UPLOAD_TOKEN must hold the scan\'s upload token');
  const files = (optional(env.VIGIL_RESULT_FILES) ?? '').split(',').map((file) => file.trim()).filter(Boolean);
  if (files.length === 0) throw new SettingsError('VIGIL_RESULT_FILES must list the result files to upload, comma-separated');
  return { token, resultFiles: files };
}
