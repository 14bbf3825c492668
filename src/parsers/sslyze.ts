import { z } from 'zod';
import { FindingBudget } from './finding-bounds.js';
import type { Finding, ParseResult, ResultParser, ThreatLevel, UnscannedHost } from '../domain/risks/finding.js';
import { JsonInput, type JsonInputOptions } from './json/json-input.js';
import { checkShape } from './json/shape-check.js';
import { mergeFindingsWithSameIdentity, mostSevere } from './json/merge-findings.js';

/**
 * Parser for sslyze `--json_out` files: 3.x (`server_info` +
 * `scan_commands_results.<command>`), 5.x and 6.x (`server_location` +
 * `scan_result.<command>.{status,result}`). A server sslyze could not reach
 * (`connectivity_status` ERROR, `scan_result` null, or 3.x
 * `server_connectivity_errors`) yields no findings: it is not a broken file.
 *
 * One finding per check per server; fingerprint `sslyze:<check>`. The server's
 * host and port are the finding's location, so two ports of one host stay two
 * risks without being part of the fingerprint.
 *
 * | check                          | level        | why                                                      |
 * |--------------------------------|--------------|----------------------------------------------------------|
 * | ssl_2_0_enabled                | HIGH         | DROWN; no client needs it                                |
 * | ssl_3_0_enabled                | HIGH         | POODLE                                                   |
 * | tls_1_0_enabled                | MEDIUM       | deprecated (RFC 8996), BEAST-era CBC                     |
 * | tls_1_1_enabled                | MEDIUM       | deprecated (RFC 8996)                                    |
 * | tls_1_2_weak_cipher_suites     | MEDIUM / LOW | MEDIUM with NULL/anon/EXPORT/RC4/DES/3DES/IDEA/RC2/MD5;  |
 * |                                |              | LOW when only CBC or no forward secrecy (Mozilla         |
 * |                                |              | "intermediate" accepts neither)                          |
 * | tls_1_3_not_supported          | INFO         | hygiene, not a weakness by itself                        |
 * | heartbleed                     | HIGH         | CVE-2014-0160, remote memory disclosure                  |
 * | openssl_ccs_injection          | HIGH         | CVE-2014-0224, MITM                                      |
 * | robot                          | HIGH / MEDIUM| strong / weak Bleichenbacher oracle                      |
 * | insecure_renegotiation         | MEDIUM       | CVE-2009-3555 prefix injection                           |
 * | client_initiated_renegotiation | LOW          | CPU exhaustion (DoS) only                                |
 * | tls_compression                | MEDIUM       | CRIME (CVE-2012-4929)                                    |
 * | tls_fallback_scsv_missing      | LOW          | downgrade protection, matters only with old versions on  |
 * | certificate_expired            | HIGH         | clients refuse the connection                            |
 * | certificate_not_yet_valid      | HIGH         | same                                                     |
 * | certificate_hostname_mismatch  | HIGH         | same                                                     |
 * | certificate_untrusted          | HIGH / MEDIUM| rejected by every / some trust stores sslyze tried       |
 * | certificate_weak_signature     | MEDIUM       | SHA-1 or MD5 signature, collision attacks                |
 *
 * cvss is always "": sslyze reports no scores and these are configuration
 * weaknesses, not a CVE each. Certificate validity is judged at the scan's own
 * time (5.x/6.x `date_scans_started`), never the parser's clock, so a file
 * parses the same way next year. sslyze 3.x records no scan time; there the
 * verdict of its own trust-store validation at scan time is used ('certificate
 * has expired' / 'certificate is not yet valid').
 */
const FORMAT = 'JSON report from sslyze --json_out';

type CheckName =
  | 'ssl_2_0_enabled'
  | 'ssl_3_0_enabled'
  | 'tls_1_0_enabled'
  | 'tls_1_1_enabled'
  | 'tls_1_2_weak_cipher_suites'
  | 'tls_1_3_not_supported'
  | 'heartbleed'
  | 'openssl_ccs_injection'
  | 'robot'
  | 'insecure_renegotiation'
  | 'client_initiated_renegotiation'
  | 'tls_compression'
  | 'tls_fallback_scsv_missing'
  | 'certificate_expired'
  | 'certificate_not_yet_valid'
  | 'certificate_hostname_mismatch'
  | 'certificate_untrusted'
  | 'certificate_weak_signature';

/** What one check found on one server. */
interface TlsIssue {
  check: CheckName;
  threat_level: ThreatLevel;
  evidence: Record<string, unknown>;
}

interface CheckText {
  title: string;
  description: string;
  solution: string;
  cves?: string[];
}

const DEPRECATED_PROTOCOL_SOLUTION = 'Disable the protocol version in the server or load balancer configuration and offer TLS 1.2 and TLS 1.3 only.';

const CHECK_TEXTS: Readonly<Record<CheckName, CheckText>> = {
  ssl_2_0_enabled: {
    title: 'SSL 2.0 enabled',
    description: 'The server accepts SSL 2.0 connections. SSL 2.0 is broken (DROWN) and lets an attacker decrypt or tamper with traffic.',
    solution: DEPRECATED_PROTOCOL_SOLUTION,
    cves: ['CVE-2016-0800'],
  },
  ssl_3_0_enabled: {
    title: 'SSL 3.0 enabled',
    description: 'The server accepts SSL 3.0 connections. SSL 3.0 is broken (POODLE) and prohibited by RFC 7568.',
    solution: DEPRECATED_PROTOCOL_SOLUTION,
    cves: ['CVE-2014-3566'],
  },
  tls_1_0_enabled: {
    title: 'TLS 1.0 enabled',
    description: 'The server accepts TLS 1.0 connections. TLS 1.0 is deprecated by RFC 8996 and lacks modern cipher suites.',
    solution: DEPRECATED_PROTOCOL_SOLUTION,
  },
  tls_1_1_enabled: {
    title: 'TLS 1.1 enabled',
    description: 'The server accepts TLS 1.1 connections. TLS 1.1 is deprecated by RFC 8996 and lacks modern cipher suites.',
    solution: DEPRECATED_PROTOCOL_SOLUTION,
  },
  tls_1_2_weak_cipher_suites: {
    title: 'Weak cipher suites accepted for TLS 1.2',
    description:
      'The server accepts TLS 1.2 cipher suites that are broken (NULL, anonymous, export, RC4, DES, 3DES, MD5) or not recommended (CBC mode, no forward secrecy). The evidence lists each suite and why.',
    solution: 'Offer only ECDHE or DHE key exchange with AES-GCM or ChaCha20-Poly1305 for TLS 1.2.',
  },
  tls_1_3_not_supported: {
    title: 'TLS 1.3 not supported',
    description: 'The server does not accept TLS 1.3, the current protocol version with the strongest defaults.',
    solution: 'Enable TLS 1.3 in the server or load balancer configuration.',
  },
  heartbleed: {
    title: 'Vulnerable to Heartbleed',
    description:
      'The server answers malformed heartbeat requests with its own memory (Heartbleed), which can leak private keys, session cookies and passwords.',
    solution: 'Upgrade OpenSSL to 1.0.1g or later, then replace the private key and certificate and invalidate sessions.',
    cves: ['CVE-2014-0160'],
  },
  openssl_ccs_injection: {
    title: 'Vulnerable to OpenSSL CCS injection',
    description: 'The server accepts an early ChangeCipherSpec message, which lets a man in the middle force weak keying material.',
    solution: 'Upgrade OpenSSL to 0.9.8za, 1.0.0m, 1.0.1h or later.',
    cves: ['CVE-2014-0224'],
  },
  robot: {
    title: 'Vulnerable to ROBOT',
    description:
      'The server exposes a Bleichenbacher padding oracle for RSA key exchange (ROBOT), which lets an attacker decrypt recorded traffic or sign with the server key.',
    solution: 'Disable cipher suites with RSA key exchange (TLS_RSA_*) or apply the vendor patch for the TLS stack.',
  },
  insecure_renegotiation: {
    title: 'Insecure TLS renegotiation supported',
    description: 'The server does not support secure renegotiation (RFC 5746), so a man in the middle can inject data into a client session.',
    solution: 'Upgrade the TLS library and enable secure renegotiation (RFC 5746).',
    cves: ['CVE-2009-3555'],
  },
  client_initiated_renegotiation: {
    title: 'Client-initiated renegotiation accepted',
    description: 'The server lets clients renegotiate repeatedly, which makes CPU exhaustion (denial of service) cheap for an attacker.',
    solution: 'Disable client-initiated renegotiation in the server configuration.',
  },
  tls_compression: {
    title: 'TLS compression enabled',
    description: 'The server compresses TLS records, which lets an attacker recover secrets such as session cookies (CRIME).',
    solution: 'Disable TLS-level compression.',
    cves: ['CVE-2012-4929'],
  },
  tls_fallback_scsv_missing: {
    title: 'TLS_FALLBACK_SCSV not supported',
    description: 'The server ignores the TLS_FALLBACK_SCSV signal, so an attacker can make clients fall back to an older protocol version.',
    solution: 'Upgrade the TLS library to one that honours TLS_FALLBACK_SCSV (RFC 7507), or disable protocol versions older than TLS 1.2.',
  },
  certificate_expired: {
    title: 'Certificate expired',
    description: 'The server certificate had expired when the scan ran; clients refuse or warn about the connection.',
    solution: 'Renew the certificate and automate renewal.',
  },
  certificate_not_yet_valid: {
    title: 'Certificate not yet valid',
    description: 'The server certificate was not yet valid when the scan ran; clients refuse or warn about the connection.',
    solution: 'Deploy a certificate whose validity period has started, and check the server clock.',
  },
  certificate_hostname_mismatch: {
    title: 'Certificate does not match the host name',
    description: 'The server certificate is not issued for the host name that was scanned; clients refuse or warn about the connection.',
    solution: 'Deploy a certificate whose subject alternative names include this host name.',
  },
  certificate_untrusted: {
    title: 'Certificate not trusted',
    description:
      'The certificate chain does not validate against the trust stores sslyze checked (self-signed, unknown CA or incomplete chain). The evidence lists each failing trust store.',
    solution: 'Deploy a certificate issued by a public CA and send the complete intermediate chain.',
  },
  certificate_weak_signature: {
    title: 'Certificate signed with a weak hash',
    description: 'The certificate or its chain is signed with SHA-1 or MD5, for which collisions can be forged.',
    solution: 'Reissue the certificate with a SHA-256 (or stronger) signature.',
  },
};

const integer = z.union([z.number().int(), z.string().regex(/^\d+$/)], 'must be an integer').transform(Number);
const optionalText = z.string().nullish();
const optionalFlag = z.boolean().nullish();

const serverLocationSchema = z
  .object({ hostname: optionalText, ip_address: optionalText, port: integer.pipe(z.number().min(1, 'must be 1 to 65535').max(65535, 'must be 1 to 65535')) })
  .refine((location) => Boolean(location.hostname || location.ip_address), {
    message: "the server location has neither 'hostname' nor 'ip_address'",
  });

const networkConfigurationSchema = z.object({ tls_server_name_indication: optionalText }).nullish();

const sslyze3ServerSchema = z.object({
  server_info: z.object({ server_location: serverLocationSchema, network_configuration: networkConfigurationSchema }),
  scan_commands_results: z.record(z.string(), z.unknown()).nullish(),
});

const sslyze5ServerSchema = z.object({
  server_location: serverLocationSchema,
  network_configuration: networkConfigurationSchema,
  connectivity_status: optionalText,
  scan_result: z.record(z.string(), z.object({ status: z.string(), result: z.unknown() }).nullish()).nullish(),
});

const reportSchema = z.object({
  server_scan_results: z.array(z.unknown()),
  date_scans_started: optionalText,
  date_scans_completed: optionalText,
  sslyze_version: optionalText,
  invalid_server_strings: z.array(z.object({ server_string: z.string(), error_message: optionalText })).nullish(),
});

/** Longest reason kept from a scanner's error text. */
const MAX_REASON = 300;

const cipherSuiteScanSchema = z.object({
  is_tls_version_supported: optionalFlag,
  accepted_cipher_suites: z.array(z.object({ cipher_suite: z.object({ name: z.string(), is_anonymous: optionalFlag }) })).nullish(),
});

const heartbleedSchema = z.object({ is_vulnerable_to_heartbleed: optionalFlag });
const ccsInjectionSchema = z.object({ is_vulnerable_to_ccs_injection: optionalFlag });
const robotSchema = z.object({ robot_result: optionalText });
const compressionSchema = z.object({ supports_compression: optionalFlag });
const fallbackScsvSchema = z.object({ supports_fallback_scsv: optionalFlag });
const renegotiationSchema = z.object({
  supports_secure_renegotiation: optionalFlag,
  accepts_client_renegotiation: optionalFlag, // 3.x
  is_vulnerable_to_client_renegotiation_dos: optionalFlag, // 5.x+
  client_renegotiations_success_count: z.number().nullish(),
});

const certificateSchema = z.object({
  not_valid_before: optionalText,
  not_valid_after: optionalText,
  notBefore: optionalText, // 3.x
  notAfter: optionalText, // 3.x
  signature_hash_algorithm: z.object({ name: optionalText }).nullish(),
  signatureAlgorithm: optionalText, // 3.x
  subject: z.object({ rfc4514_string: optionalText }).nullish(),
  subject_alternative_name: z.object({ dns: z.array(z.string()).nullish(), dns_names: z.array(z.string()).nullish() }).nullish(),
  subjectAlternativeName: z.object({ DNS: z.array(z.string()).nullish() }).nullish(), // 3.x
});

const pathValidationSchema = z.object({
  trust_store: z.object({ name: optionalText, version: optionalText }).nullish(),
  was_validation_successful: optionalFlag,
  verified_certificate_chain: z.array(z.unknown()).nullish(),
  openssl_error_string: optionalText, // 3.x, 5.x
  validation_error: optionalText, // 6.x
});

const certificateDeploymentSchema = z.object({
  received_certificate_chain: z.array(certificateSchema).nullish(),
  leaf_certificate_subject_matches_hostname: optionalFlag, // 3.x, 5.x; 6.x reports it as a validation error
  verified_chain_has_sha1_signature: optionalFlag,
  path_validation_results: z.array(pathValidationSchema).nullish(),
});

const certificateInfoSchema = z.object({
  hostname_used_for_server_name_indication: optionalText,
  certificate_deployments: z.array(certificateDeploymentSchema).nullish(),
});

type CertificateDeployment = z.output<typeof certificateDeploymentSchema>;
type Certificate = z.output<typeof certificateSchema>;
type PathValidation = z.output<typeof pathValidationSchema>;

/** One reachable server, whichever sslyze version wrote it. */
interface ScannedServer {
  where: string;
  hostname: string;
  ipAddress: string | null;
  port: number;
  serverNameIndication: string | null;
  /** The result of a command that completed, validated against `schema`; undefined when it did not run or failed. */
  result<S extends z.ZodType>(command: string, schema: S): z.output<S> | undefined;
}

interface ScanContext {
  /** Milliseconds since the epoch when the scan ran, from the file; undefined for sslyze 3.x. */
  scanTime: number | undefined;
  sslyzeVersion: string | null;
}

export function createSslyzeParser(options: JsonInputOptions = {}): ResultParser {
  const input = new JsonInput(FORMAT, options);
  return {
    write: (chunk) => input.write(chunk),
    end: (): ParseResult => {
      const report = checkShape(input.parseDocument(), reportSchema, {
        format: FORMAT,
        expected: "an object with a 'server_scan_results' array",
      });
      const context: ScanContext = {
        scanTime: parseUtcTimestamp(report.date_scans_started ?? report.date_scans_completed),
        sslyzeVersion: report.sslyze_version ?? null,
      };
      const servers = report.server_scan_results.flatMap((entry, index) => readServer(entry, `server_scan_results[${index}]`));
      const findings = servers.flatMap((server) => findTlsIssues(server, context).map((issue) => issueToFinding(server, issue, context)));
      const unscanned = [...(report.invalid_server_strings ?? []).map(invalidServer), ...report.server_scan_results.flatMap(unreachableServer)];
      return { findings: new FindingBudget().addAll(mergeFindingsWithSameIdentity(findings, keepMostSevere)), hosts: [], unscanned };
    },
  };
}

/** `host:port{ip}` as given on the command line: the host (sslyze could not parse or resolve it). */
function invalidServer(invalid: { server_string: string; error_message?: string | null }): UnscannedHost {
  const host = invalid.server_string.replace(/\{[^}]*\}$/, '').replace(/:\d+$/, '');
  return {
    host,
    reason: `sslyze could not scan ${invalid.server_string.slice(0, 100)}: ${(invalid.error_message ?? 'invalid server string').slice(0, MAX_REASON)}`,
  };
}

/** A server sslyze could not connect to (sslyze 5+): its last trace line says why. */
function unreachableServer(entry: unknown): UnscannedHost[] {
  if (!isObject(entry) || entry.connectivity_status !== 'ERROR' || !isObject(entry.server_location)) return [];
  const location = entry.server_location;
  const host = typeof location.hostname === 'string' ? location.hostname : typeof location.ip_address === 'string' ? location.ip_address : undefined;
  if (host === undefined) return [];
  const trace = typeof entry.connectivity_error_trace === 'string' ? entry.connectivity_error_trace.trim().split('\n').at(-1)!.trim() : '';
  return [{ host, reason: `sslyze could not connect to ${host}:${String(location.port ?? '')}${trace === '' ? '' : `: ${trace.slice(0, MAX_REASON)}`}` }];
}

function readServer(entry: unknown, where: string): ScannedServer[] {
  if (isObject(entry) && 'server_info' in entry) return [readSslyze3Server(entry, where)];
  const server = checkShape(entry, sslyze5ServerSchema, { format: FORMAT, expected: 'an sslyze server scan result', where });
  const results = server.scan_result;
  const reachable = server.connectivity_status == null || server.connectivity_status === 'COMPLETED';
  if (!results || !reachable) return [];
  return [
    describeServer(server.server_location, server.network_configuration, where, (command) => {
      const attempt = results[command];
      return attempt?.status === 'COMPLETED' && attempt.result != null ? { value: attempt.result, path: `${where}.scan_result.${command}.result` } : undefined;
    }),
  ];
}

function readSslyze3Server(entry: unknown, where: string): ScannedServer {
  const server = checkShape(entry, sslyze3ServerSchema, { format: FORMAT, expected: 'an sslyze 3 server scan result', where });
  const results = server.scan_commands_results ?? {};
  return describeServer(server.server_info.server_location, server.server_info.network_configuration, where, (command) =>
    results[command] != null ? { value: results[command], path: `${where}.scan_commands_results.${command}` } : undefined,
  );
}

type ServerLocation = z.output<typeof serverLocationSchema>;
type RawResultLookup = (command: string) => { value: unknown; path: string } | undefined;

function describeServer(location: ServerLocation, network: z.output<typeof networkConfigurationSchema>, where: string, lookup: RawResultLookup): ScannedServer {
  return {
    where,
    hostname: location.hostname || location.ip_address || '',
    ipAddress: location.ip_address ?? null,
    port: location.port,
    serverNameIndication: network?.tls_server_name_indication ?? null,
    result: (command, schema) => {
      const raw = lookup(command);
      if (!raw) return undefined;
      return checkShape(raw.value, schema, { format: FORMAT, expected: `an sslyze ${command} result`, where: raw.path });
    },
  };
}

function findTlsIssues(server: ScannedServer, context: ScanContext): TlsIssue[] {
  const issues = [
    ...deprecatedProtocolIssues(server),
    weakTls12CipherIssue(server),
    missingTls13Issue(server),
    ...vulnerabilityIssues(server),
    ...renegotiationIssues(server),
    ...certificateIssues(server, context),
  ];
  return issues.filter((issue): issue is TlsIssue => issue !== undefined);
}

function issueToFinding(server: ScannedServer, issue: TlsIssue, context: ScanContext): Finding {
  const text = CHECK_TEXTS[issue.check];
  return {
    fingerprint: `sslyze:${issue.check}`,
    location: { host: server.hostname, port: server.port, protocol: 'tcp' },
    definition: {
      scan_type: 'SSLYZE',
      title: text.title,
      threat_level: issue.threat_level,
      description: text.description,
      solution: text.solution,
      cvss: '',
      additional_info: {
        check: issue.check,
        cves: text.cves ?? [],
        ip_address: server.ipAddress,
        server_name_indication: server.serverNameIndication,
        sslyze_version: context.sslyzeVersion,
        ...issue.evidence,
      },
    },
  };
}

/** The same server scanned twice in one file: one finding, at the worse level. */
function keepMostSevere(kept: Finding, duplicate: Finding): Finding {
  const threat_level = mostSevere(kept.definition.threat_level, duplicate.definition.threat_level);
  const worse = threat_level === kept.definition.threat_level ? kept : duplicate;
  return { ...worse, definition: { ...worse.definition, threat_level } };
}

// ---- protocol versions and cipher suites ----

const DEPRECATED_PROTOCOLS: ReadonlyArray<{ command: string; check: CheckName; level: ThreatLevel }> = [
  { command: 'ssl_2_0_cipher_suites', check: 'ssl_2_0_enabled', level: 'HIGH' },
  { command: 'ssl_3_0_cipher_suites', check: 'ssl_3_0_enabled', level: 'HIGH' },
  { command: 'tls_1_0_cipher_suites', check: 'tls_1_0_enabled', level: 'MEDIUM' },
  { command: 'tls_1_1_cipher_suites', check: 'tls_1_1_enabled', level: 'MEDIUM' },
];

function deprecatedProtocolIssues(server: ScannedServer): Array<TlsIssue | undefined> {
  return DEPRECATED_PROTOCOLS.map(({ command, check, level }) => {
    const scan = server.result(command, cipherSuiteScanSchema);
    const accepted = acceptedSuites(scan);
    if (!scan || (accepted.length === 0 && scan.is_tls_version_supported !== true)) return undefined;
    return { check, threat_level: level, evidence: { accepted_cipher_suites: accepted.map((suite) => suite.name) } };
  });
}

function weakTls12CipherIssue(server: ScannedServer): TlsIssue | undefined {
  const weak = acceptedSuites(server.result('tls_1_2_cipher_suites', cipherSuiteScanSchema))
    .map((suite) => ({ name: suite.name, ...cipherSuiteWeaknesses(suite.name, suite.is_anonymous === true) }))
    .filter((suite) => suite.reasons.length > 0);
  if (weak.length === 0) return undefined;
  return {
    check: 'tls_1_2_weak_cipher_suites',
    threat_level: weak.some((suite) => suite.broken) ? 'MEDIUM' : 'LOW',
    evidence: { weak_cipher_suites: weak.map(({ name, reasons }) => ({ name, reasons })) },
  };
}

function missingTls13Issue(server: ScannedServer): TlsIssue | undefined {
  const scan = server.result('tls_1_3_cipher_suites', cipherSuiteScanSchema);
  if (!scan || acceptedSuites(scan).length > 0 || scan.is_tls_version_supported === true) return undefined;
  return { check: 'tls_1_3_not_supported', threat_level: 'INFO', evidence: {} };
}

function acceptedSuites(scan: z.output<typeof cipherSuiteScanSchema> | undefined) {
  return (scan?.accepted_cipher_suites ?? []).map((accepted) => accepted.cipher_suite);
}

/** Broken outright: no confidentiality, no authentication, or a cipher with practical attacks. */
const BROKEN_CIPHER_PARTS: ReadonlyArray<[RegExp, string]> = [
  [/_WITH_NULL_|_NULL_WITH_/, 'no encryption (NULL)'],
  [/_ANON_/, 'no authentication (anonymous)'],
  [/EXPORT/, 'export-grade key'],
  [/_RC4_/, 'RC4'],
  [/_3DES_|_DES_EDE/, '3DES, 64-bit block (Sweet32)'],
  [/_DES(40)?_CBC/, 'DES'],
  [/_IDEA_|_RC2_/, '64-bit block cipher'],
  [/_MD5$/, 'MD5 MAC'],
];

/** Weaknesses of one IANA-named TLS 1.2 suite (e.g. TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA). */
export function cipherSuiteWeaknesses(name: string, isAnonymous: boolean): { reasons: string[]; broken: boolean } {
  const upper = name.toUpperCase();
  const reasons = BROKEN_CIPHER_PARTS.filter(([pattern]) => pattern.test(upper)).map(([, reason]) => reason);
  if (isAnonymous && !reasons.includes('no authentication (anonymous)')) reasons.push('no authentication (anonymous)');
  const broken = reasons.length > 0;
  const keyExchange = /^TLS_(.+?)_WITH_/.exec(upper)?.[1] ?? '';
  if (!/^(ECDHE|DHE)(_|$)/.test(keyExchange)) reasons.push('no forward secrecy');
  if (!/_GCM_|_CCM|_CHACHA20_POLY1305/.test(upper) && !/_RC4_|_WITH_NULL_/.test(upper)) reasons.push('CBC mode');
  return { reasons, broken };
}

// ---- known vulnerabilities and renegotiation ----

function vulnerabilityIssues(server: ScannedServer): Array<TlsIssue | undefined> {
  const heartbleed = server.result('heartbleed', heartbleedSchema);
  const ccs = server.result('openssl_ccs_injection', ccsInjectionSchema);
  const compression = server.result('tls_compression', compressionSchema);
  const fallback = server.result('tls_fallback_scsv', fallbackScsvSchema);
  return [
    heartbleed?.is_vulnerable_to_heartbleed ? issue('heartbleed', 'HIGH') : undefined,
    ccs?.is_vulnerable_to_ccs_injection ? issue('openssl_ccs_injection', 'HIGH') : undefined,
    robotIssue(server),
    compression?.supports_compression ? issue('tls_compression', 'MEDIUM') : undefined,
    fallback?.supports_fallback_scsv === false ? issue('tls_fallback_scsv_missing', 'LOW') : undefined,
  ];
}

function robotIssue(server: ScannedServer): TlsIssue | undefined {
  const verdict = server.result('robot', robotSchema)?.robot_result ?? '';
  if (verdict.startsWith('VULNERABLE_STRONG_ORACLE')) return issue('robot', 'HIGH', { robot_result: verdict });
  if (verdict.startsWith('VULNERABLE_WEAK_ORACLE')) return issue('robot', 'MEDIUM', { robot_result: verdict });
  return undefined;
}

function renegotiationIssues(server: ScannedServer): Array<TlsIssue | undefined> {
  const renegotiation = server.result('session_renegotiation', renegotiationSchema);
  if (!renegotiation) return [];
  const acceptsClientRenegotiation = renegotiation.accepts_client_renegotiation === true || renegotiation.is_vulnerable_to_client_renegotiation_dos === true;
  const successCount = renegotiation.client_renegotiations_success_count;
  return [
    renegotiation.supports_secure_renegotiation === false ? issue('insecure_renegotiation', 'MEDIUM') : undefined,
    acceptsClientRenegotiation
      ? issue('client_initiated_renegotiation', 'LOW', successCount == null ? {} : { client_renegotiations_success_count: successCount })
      : undefined,
  ];
}

function issue(check: CheckName, threat_level: ThreatLevel, evidence: Record<string, unknown> = {}): TlsIssue {
  return { check, threat_level, evidence };
}

// ---- certificates ----

/** One certificate deployment (a server may present an RSA and an ECDSA certificate) with its verdicts. */
interface DeploymentReview {
  leaf: Certificate | undefined;
  summary: Record<string, unknown>;
  failures: PathValidation[];
  validations: PathValidation[];
  deployment: CertificateDeployment;
}

function certificateIssues(server: ScannedServer, context: ScanContext): Array<TlsIssue | undefined> {
  const info = server.result('certificate_info', certificateInfoSchema);
  const reviews = (info?.certificate_deployments ?? []).map(reviewDeployment);
  if (reviews.length === 0) return [];
  return [
    certificateIssue('certificate_expired', 'HIGH', reviews, (review) => isExpired(review, context)),
    certificateIssue('certificate_not_yet_valid', 'HIGH', reviews, (review) => isNotYetValid(review, context)),
    certificateIssue('certificate_hostname_mismatch', 'HIGH', reviews, isHostnameMismatch),
    untrustedCertificateIssue(reviews),
    certificateIssue('certificate_weak_signature', 'MEDIUM', reviews, hasWeakSignature),
  ].map((found) => found && withJudgementTime(found, context));
}

function reviewDeployment(deployment: CertificateDeployment): DeploymentReview {
  const leaf = deployment.received_certificate_chain?.[0];
  const validations = deployment.path_validation_results ?? [];
  return {
    leaf,
    deployment,
    validations,
    failures: validations.filter((validation) => !validationSucceeded(validation)),
    summary: {
      subject: leaf?.subject?.rfc4514_string ?? null,
      subject_alternative_names: subjectAlternativeNames(leaf),
      not_valid_before: leaf?.not_valid_before ?? leaf?.notBefore ?? null,
      not_valid_after: leaf?.not_valid_after ?? leaf?.notAfter ?? null,
      signature_hash_algorithm: signatureHash(leaf),
    },
  };
}

function certificateIssue(
  check: CheckName,
  level: ThreatLevel,
  reviews: readonly DeploymentReview[],
  applies: (review: DeploymentReview) => boolean,
): TlsIssue | undefined {
  const affected = reviews.filter(applies);
  if (affected.length === 0) return undefined;
  return issue(check, level, { certificates: affected.map((review) => review.summary) });
}

function untrustedCertificateIssue(reviews: readonly DeploymentReview[]): TlsIssue | undefined {
  const untrusted = reviews
    .map((review) => ({ review, failures: review.failures.filter((failure) => !isTimeOrHostnameError(errorOf(failure))) }))
    .filter(({ failures }) => failures.length > 0);
  if (untrusted.length === 0) return undefined;
  const rejectedEverywhere = untrusted.some(({ review, failures }) => failures.length === review.validations.length);
  return issue('certificate_untrusted', rejectedEverywhere ? 'HIGH' : 'MEDIUM', {
    certificates: untrusted.map(({ review, failures }) => ({
      ...review.summary,
      failing_trust_stores: failures.map((failure) => ({ trust_store: trustStoreName(failure), error: errorOf(failure) })),
    })),
  });
}

function withJudgementTime(found: TlsIssue, context: ScanContext): TlsIssue {
  if (found.check !== 'certificate_expired' && found.check !== 'certificate_not_yet_valid') return found;
  const judgedAt = context.scanTime === undefined ? 'sslyze trust-store validation' : new Date(context.scanTime).toISOString();
  return { ...found, evidence: { ...found.evidence, judged_at: judgedAt } };
}

function isExpired(review: DeploymentReview, context: ScanContext): boolean {
  if (context.scanTime === undefined) return validationErrors(review).some((error) => /has expired/i.test(error));
  const notAfter = parseUtcTimestamp(review.leaf?.not_valid_after ?? review.leaf?.notAfter);
  return notAfter !== undefined && notAfter < context.scanTime;
}

function isNotYetValid(review: DeploymentReview, context: ScanContext): boolean {
  if (context.scanTime === undefined) return validationErrors(review).some((error) => /not yet valid/i.test(error));
  const notBefore = parseUtcTimestamp(review.leaf?.not_valid_before ?? review.leaf?.notBefore);
  return notBefore !== undefined && notBefore > context.scanTime;
}

function isHostnameMismatch(review: DeploymentReview): boolean {
  if (review.deployment.leaf_certificate_subject_matches_hostname === false) return true;
  return validationErrors(review).some(isHostnameError);
}

function hasWeakSignature(review: DeploymentReview): boolean {
  const hash = signatureHash(review.leaf)?.toLowerCase() ?? '';
  return review.deployment.verified_chain_has_sha1_signature === true || /^(sha1|md5|md2)$/.test(hash);
}

function validationSucceeded(validation: PathValidation): boolean {
  return validation.was_validation_successful ?? validation.verified_certificate_chain != null;
}

function validationErrors(review: DeploymentReview): string[] {
  return review.failures.map(errorOf).filter((error) => error !== '');
}

function errorOf(validation: PathValidation): string {
  return validation.validation_error ?? validation.openssl_error_string ?? '';
}

/** Errors other checks already report: validity period (OpenSSL and sslyze 6 wording) and host name. */
function isTimeOrHostnameError(error: string): boolean {
  return /has expired|not yet valid|not valid at validation time/i.test(error) || isHostnameError(error);
}

function isHostnameError(error: string): boolean {
  return /subjectAltName|hostname mismatch|does not match/i.test(error);
}

function trustStoreName(validation: PathValidation): string {
  return [validation.trust_store?.name, validation.trust_store?.version].filter(Boolean).join(' ') || 'unknown trust store';
}

function signatureHash(leaf: Certificate | undefined): string | null {
  return leaf?.signature_hash_algorithm?.name ?? leaf?.signatureAlgorithm ?? null;
}

function subjectAlternativeNames(leaf: Certificate | undefined): string[] {
  const modern = leaf?.subject_alternative_name;
  return modern?.dns_names ?? modern?.dns ?? leaf?.subjectAlternativeName?.DNS ?? [];
}

/** sslyze writes UTC times, without a zone before 6.x ('2022-01-17T17:23:27.355556'). */
function parseUtcTimestamp(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text.trim());
  const time = Date.parse(hasZone ? text.trim() : `${text.trim()}Z`);
  return Number.isNaN(time) ? undefined : time;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
