/**
 * Every environment variable Vigil reads, as data: its name, the value used
 * when it is unset, what it accepts and what it means. settings.ts reads the
 * defaults and bounds from here, and docs/configuration.md's table is
 * generated from it (scripts/write-configuration-doc.ts), so the page cannot
 * say one thing while the code does another. Meanings are markdown, with
 * links relative to docs/.
 */
import { MAX_TTL_SECONDS } from '../domain/scans/scan-resource.js';
import { DEFAULT_BACKUP_SCHEDULE } from '../domain/backups/backup-schedule.js';

/** A whole number from min to max, both included. */
export interface WholeNumberBound {
  readonly min: number;
  readonly max: number;
}

export interface SettingDefinition {
  readonly name: string;
  /** The value read when the variable is unset or blank; undefined when there is none (the setting is off, or derived from others). */
  readonly fallback?: string;
  /** The default as a reader should see it, when it is not the fallback as written (derived, or a number better read with its unit). */
  readonly shownDefault?: string;
  /** What the variable accepts: a whole-number range, one of some words, or a sentence. */
  readonly bound: WholeNumberBound | readonly [string, ...string[]] | string;
  readonly meaning: string;
}

const SETTINGS = [
  { name: 'VIGIL_HOST', fallback: '127.0.0.1', bound: 'a host name or IP address', meaning: 'address to listen on' },
  { name: 'VIGIL_PORT', fallback: '8080', bound: { min: 0, max: 65535 }, meaning: 'port to listen on (`0` picks a free port)' },
  {
    name: 'VIGIL_METRICS_PORT',
    bound: { min: 1, max: 65535 },
    meaning:
      'serve `/metrics` on this port (same `VIGIL_HOST`) and not on `VIGIL_PORT`, which it must differ from, so a proxy or Ingress in front of the API never exposes it; unset: `/metrics` on `VIGIL_PORT`',
  },
  {
    name: 'VIGIL_DATA_DIR',
    fallback: './data',
    bound: 'a directory on a local filesystem',
    meaning:
      "where the SQLite database (`vigil.db`), result files and reports live (a scanner output of up to 1 MiB from a scan Vigil ran itself is kept in the database, in its result row; larger ones, uploads and outputs collected from Kubernetes Jobs are files under `results/`). Relative paths here and in every other path setting are resolved once, against the directory `vigil` was started in. One `vigil serve` per directory: it holds a lock on `serve.lock` there while it runs, and a second one on the same directory exits at once with code 1 and a sentence naming the directory and the first (its pid, host and start time, from `serve.lock.owner`), before it opens the database. The lock is an OS file lock, dropped with the process however it ends (`kill -9` included), so a crash never leaves the directory locked; it needs a local filesystem (or a volume one node mounts), as SQLite does. The CLI's other commands (`vigil accounts`, `vigil webhooks`) share the directory with a running server",
  },
  {
    name: 'VIGIL_BOOTSTRAP_API_KEY',
    bound: 'any text',
    meaning:
      'at `serve` start, make sure an account named `default` exists whose API key is this value. When unset and no account exists, one is created and its key printed once.',
  },
  {
    name: 'VIGIL_ALLOW_TARGETS',
    shownDefault: 'empty',
    bound: 'comma-separated IPv4 CIDRs',
    meaning:
      'IPv4 CIDRs exempt from the public-address rule (labs, tests), for scan targets and webhook endpoints alike. Everything else private or reserved is still refused.',
  },
  {
    name: 'VIGIL_MAX_CONCURRENT_SCANS',
    fallback: '10',
    bound: { min: 1, max: 10_000 },
    meaning: 'scans running at once across all accounts; further scans wait in `QUEUED`',
  },
  {
    name: 'VIGIL_SCAN_TTL_AFTER_FINISHED',
    fallback: String(7 * 24 * 3600),
    shownDefault: '`604800` (7 days)',
    bound: { min: 0, max: MAX_TTL_SECONDS },
    meaning:
      "kubernetes runtime: seconds a finished Scan's custom resource stays before Vigil deletes it; its record stays (see [Running against a cluster](kubernetes.md#running-against-a-cluster-vigil_runtimekubernetes)). A Scan's `spec.ttlSecondsAfterFinished` overrides it; chart value `scans.ttlSecondsAfterFinished`",
  },
  { name: 'VIGIL_WEBHOOK_CA_FILE', bound: 'a PEM file', meaning: 'PEM bundle trusted for webhook delivery in addition to the public authorities' },
  {
    name: 'VIGIL_RUNTIME',
    fallback: 'embedded',
    bound: ['embedded', 'kubernetes'],
    meaning: 'where Scans run: in this process, or as Kubernetes Jobs of an operator',
  },
  {
    name: 'VIGIL_NAMESPACE',
    fallback: 'vigil',
    bound: 'a Kubernetes namespace name',
    meaning: 'the namespace the operator runs in and the `default` account is bound to',
  },
  {
    name: 'VIGIL_PUBLIC_URL',
    shownDefault: '`http://<host>:<port>`',
    bound: 'an http:// or https:// URL',
    meaning: 'the address people use to reach the service, for links in e-mails and the dashboard',
  },
  {
    name: 'VIGIL_UPLOAD_URL',
    shownDefault: '`VIGIL_PUBLIC_URL`',
    bound: 'an http:// or https:// URL',
    meaning:
      'kubernetes runtime: the address scanner pods upload results to, which is rarely the one people use (the chart sets the in-cluster Service, `http://<release>.<namespace>.svc:8080`)',
  },
  {
    name: 'VIGIL_SMTP_URL',
    bound: 'an smtp:// or smtps:// URL',
    meaning: 'SMTP server for e-mail notifications, e.g. `smtp://127.0.0.1:46025` (`make mail-sink`); unset means e-mails are logged, not sent',
  },
  { name: 'VIGIL_SMTP_FROM', fallback: 'vigil@localhost', bound: 'an e-mail address', meaning: 'sender address of notifications' },
  {
    name: 'VIGIL_EMBEDDED_SCANNERS',
    fallback: 'auto',
    bound: ['auto', 'local', 'container'],
    meaning:
      "embedded runtime: `auto` runs a scanner's local program when it is installed, else its pinned image in docker or podman; `local` only local programs; `container` only images (see [step 5](../README.md#5-every-scan-type-on-one-machine))",
  },
  {
    name: 'VIGIL_CONTAINER_ENGINE',
    bound: ['docker', 'podman'],
    meaning: 'the engine scanner images run in; unset means docker, else podman, whichever is on `PATH`',
  },
  {
    name: 'VIGIL_SCAN_TIMEOUT_SECONDS',
    fallback: '7200',
    bound: { min: 10, max: 7 * 24 * 3600 },
    meaning: 'a scanner still running after this long is stopped and its Scan fails with reason `DeadlineExceeded`',
  },
  {
    name: 'VIGIL_RESULT_FILE_MAX_MB',
    fallback: '256',
    bound: { min: 1, max: 4096 },
    meaning:
      'the largest result file a scanner pod may upload to the collector, and the largest scanner output the collector parses (ZAP and nuclei output streams through its parser at any size within it)',
  },
  {
    name: 'VIGIL_JOB_SETTINGS_FILE',
    bound: 'a JSON file',
    meaning:
      'kubernetes runtime: a JSON object of scanner Job settings laid over the defaults: `images` (per type, pinned), `vigilImage`, `resources` and `helperResources`, `serviceAccountName`, `activeDeadlineSeconds`, `outputSizeLimit`, `tmpSizeLimit`, `scannerEnv` (per type, e.g. OpenVAS credentials from a Secret), `imagePullSecrets`, `nodeSelector`, `tolerations`. Unknown keys stop start-up (`ttlSecondsAfterFinished` of earlier versions is accepted and ignored)',
  },
  {
    name: 'VIGIL_OPENVAS_GMP',
    bound: '`tls://host:9390` or `unix:///run/gvmd/gvmd.sock`',
    meaning: 'the Greenbone manager OPENVAS scans drive; without it and its login, OPENVAS scans fail with a condition naming what to set',
  },
  { name: 'VIGIL_OPENVAS_USERNAME', bound: 'any text', meaning: 'the user OPENVAS scans log in to the Greenbone manager as' },
  { name: 'VIGIL_OPENVAS_PASSWORD', bound: 'any text', meaning: "that user's password (never printed)" },
  { name: 'VIGIL_OPENVAS_CA_FILE', bound: 'a PEM file', meaning: "the CA that signed gvmd's certificate; unset: the system's trusted CAs" },
  {
    name: 'VIGIL_OPENVAS_SCAN_CONFIG',
    fallback: 'daba56c8-73ec-11df-a475-002264764cea',
    bound: 'a UUID',
    meaning: 'the scan config OPENVAS scans use (default: Full and fast)',
  },
  { name: 'VIGIL_OPENVAS_SCANNER', fallback: '08b69003-5fc2-4037-a479-93b440211c73', bound: 'a UUID', meaning: 'the scanner (default: OpenVAS Default)' },
  {
    name: 'VIGIL_OPENVAS_PORT_LIST',
    fallback: '33d0cd82-57c6-11e1-8ed1-406186ea4fc5',
    bound: 'a UUID',
    meaning: 'the port list (default: All IANA assigned TCP)',
  },
  {
    name: 'VIGIL_NESSUS_URL',
    bound: 'an https:// URL',
    meaning: 'the Nessus or Tenable server NESSUS scans drive; a private CA is trusted through `NODE_EXTRA_CA_CERTS`',
  },
  { name: 'VIGIL_NESSUS_ACCESS_KEY', bound: "printable characters without ';'", meaning: "the server's API access key" },
  { name: 'VIGIL_NESSUS_SECRET_KEY', bound: "printable characters without ';'", meaning: "the server's API secret key (never printed)" },
  {
    name: 'VIGIL_NESSUS_TEMPLATE_UUID',
    bound: 'hexadecimal digits and dashes',
    meaning: 'the scan template NESSUS scans use; unset: the basic network scan template',
  },
  {
    name: 'VIGIL_NUCLEI_TEMPLATES',
    shownDefault: '`<VIGIL_DATA_DIR>/nuclei-templates`',
    bound: 'a directory',
    meaning:
      'embedded runtime: the nuclei-templates directory NUCLEI scans run (`nuclei -t`); nothing is downloaded at scan time. Its `.vigil-templates-version` file, when present, names the release recorded on each Scan',
  },
  {
    name: 'VIGIL_CHROMIUM',
    fallback: '/usr/bin/chromium',
    bound: 'a program',
    meaning:
      "the Chromium login recordings are replayed in (embedded runtime; Vigil's image sets it for the Jobs' login step). Without it an authenticated scan's target is skipped with `Authentication Failed`, the condition saying the browser could not start",
  },
  {
    name: 'VIGIL_RATE_LIMIT_PER_SECOND',
    fallback: '50',
    bound: { min: 1, max: 1_000_000 },
    meaning: 'API requests per second each API key may make on average',
  },
  {
    name: 'VIGIL_RATE_LIMIT_BURST',
    fallback: '200',
    bound: { min: 1, max: 1_000_000 },
    meaning: 'requests a key may make at once before the per-second rate applies',
  },
  {
    name: 'VIGIL_BACKUP_DIR',
    bound: 'a directory',
    meaning:
      '`serve` makes backups itself (as `vigil backup`) into timestamped folders here, `vigil-<UTC time>` (written as `….partial`, renamed when whole); unset means none',
  },
  {
    name: 'VIGIL_BACKUP_SCHEDULE',
    fallback: DEFAULT_BACKUP_SCHEDULE,
    bound: '`DAILY`, `WEEKLY` or `MONTHLY`, a start time and an optional IANA time zone',
    meaning:
      'when backups are made (needs `VIGIL_BACKUP_DIR`): a start time whose wall-clock time repeats, e.g. `WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin`; the ScheduledScan schedule, not cron',
  },
  {
    name: 'VIGIL_BACKUP_KEEP',
    fallback: '7',
    bound: { min: 1, max: 1000 },
    meaning: 'backups kept in `VIGIL_BACKUP_DIR` (which it needs); after each new one the oldest beyond are removed (other folders there are left alone)',
  },
  {
    name: 'VIGIL_UPLOAD_TOKEN',
    bound: 'any text',
    meaning: "set by Vigil in a scanner Job for `vigil upload-result`, from the Scan's Secret: the Scan's upload token",
  },
  {
    name: 'VIGIL_RESULT_FILES',
    bound: 'comma-separated file names',
    meaning: 'set by Vigil in a scanner Job for `vigil upload-result`: the result files to send, relative to `--dir`',
  },
  {
    name: 'VIGIL_UPLOAD_DEADLINE',
    bound: 'an ISO 8601 time',
    meaning:
      "set by Vigil in a scanner Job for `vigil upload-result`: the end of the Job's `activeDeadlineSeconds`, until which the upload is retried; unset (run by hand) means 10 minutes",
  },
  { name: 'LOG_LEVEL', fallback: 'info', bound: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], meaning: 'how much the pino log says' },
] as const satisfies readonly SettingDefinition[];

export type SettingName = (typeof SETTINGS)[number]['name'];

export const SETTING_DEFINITIONS: readonly SettingDefinition[] = SETTINGS;

export function settingDefinition(name: SettingName): SettingDefinition {
  return SETTING_DEFINITIONS.find((definition) => definition.name === name)!;
}
