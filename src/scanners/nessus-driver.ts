/**
 * Runs one Nessus scan through the Nessus (or Tenable) REST API for
 * `vigil scanner nessus`: a scan of the hosts from a template, launched and
 * followed until completed, then exported in the .nessus format and
 * downloaded. The scan is deleted afterwards, also after a failure (best
 * effort). TLS is verified with the system's CAs plus NODE_EXTRA_CA_CERTS.
 *
 * Nessus Professional and Expert (7 and later) answer 412 "API is not
 * available" to scan creation and launch: only the report endpoints work
 * there. That refusal gets its own message saying which edition is needed.
 */
import { UNTRUSTED_CERTIFICATE_CODES, type ScanPolling } from './scanner-polling.js';
import type { NessusSettings } from '../config/settings.js';

/** .nessus exports of large networks reach tens of MB; this bounds the file. */
const MAX_NESSUS_REPORT_BYTES = 256 * 1024 * 1024;
const MAX_JSON_BYTES = 32 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 2 * 60_000;
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
const CLEANUP_TIMEOUT_MS = 30_000;
/** Polls come quickly at first, for short scans, then every 10 s; an export is ready within seconds to minutes. */
const SCAN_POLL_DELAYS_MS = [1_000, 2_000, 5_000, 10_000];
const EXPORT_POLL_DELAYS_MS = [1_000, 2_000, 5_000];
const FAILED_SCAN_STATUSES = new Set(['canceled', 'aborted', 'stopped']);

export interface NessusScanRequest {
  settings: NessusSettings;
  hosts: string[];
  polling: ScanPolling;
  onProgress(percent: number): void;
  /** Receives the report's bytes as they download; resolves once they are stored. */
  saveReport(chunks: AsyncIterable<Uint8Array>): Promise<void>;
}

/** The Nessus server failed or refused a step; the message is one sentence. */
class NessusError extends Error {
  override name = 'NessusError';
}

export async function runNessusScan(request: NessusScanRequest): Promise<void> {
  const api = new NessusApi(request.settings, request.polling.signal);
  const templateUuid = request.settings.templateUuid ?? (await basicTemplateUuid(api));
  const scanId = await createScan(api, templateUuid, request);
  let state: 'created' | 'launched' | 'ended' = 'created';
  try {
    await api.send('POST', `/scans/${scanId}/launch`);
    state = 'launched';
    const ended = await waitForScan(api, scanId, request);
    state = 'ended';
    if (ended !== 'completed') throw new NessusError(`the Nessus scan ${scanId} ended as '${ended}' before it completed`);
    const fileId = await exportReport(api, scanId);
    await waitForExport(api, scanId, fileId, request.polling);
    const download = await api.request('GET', `/scans/${scanId}/export/${fileId}/download`, { timeoutMs: DOWNLOAD_TIMEOUT_MS });
    await request.saveReport(cappedBody(download, `GET /scans/${scanId}/export/${fileId}/download`));
  } finally {
    await deleteScan(api, scanId, state === 'launched');
  }
}

async function basicTemplateUuid(api: NessusApi): Promise<string> {
  const answer = (await api.json('GET', '/editor/scan/templates')) as { templates?: Array<{ name?: unknown; uuid?: unknown }> };
  const basic = Array.isArray(answer.templates) ? answer.templates.find((template) => template?.name === 'basic') : undefined;
  if (typeof basic?.uuid !== 'string' || basic.uuid === '') {
    throw new NessusError(
      "the Nessus server offers no scan template named 'basic' (Basic Network Scan); set VIGIL_NESSUS_TEMPLATE_UUID to the uuid of the template to use",
    );
  }
  return basic.uuid;
}

async function createScan(api: NessusApi, templateUuid: string, request: NessusScanRequest): Promise<string> {
  const body = {
    uuid: templateUuid,
    settings: { name: `vigil ${request.polling.now().toISOString()}`, text_targets: request.hosts.join(','), enabled: false },
  };
  const answer = (await api.json('POST', '/scans', body)) as { scan?: { id?: unknown } };
  return numericId(answer.scan?.id, 'POST /scans', 'scan.id');
}

/** Follows the scan until it ends; resolves with its final status. */
async function waitForScan(api: NessusApi, scanId: string, request: NessusScanRequest): Promise<string> {
  for (let poll = 0; ; poll++) {
    const details = (await api.json('GET', `/scans/${scanId}`)) as ScanDetails;
    const status = typeof details.info?.status === 'string' ? details.info.status : '';
    if (status === 'completed') {
      request.onProgress(100);
      return status;
    }
    if (FAILED_SCAN_STATUSES.has(status)) return status;
    const progress = scanProgress(details);
    if (progress !== undefined) request.onProgress(progress);
    await request.polling.waitBeforeNextPoll(SCAN_POLL_DELAYS_MS[Math.min(poll, SCAN_POLL_DELAYS_MS.length - 1)]!, 'the Nessus scan');
  }
}

interface ScanDetails {
  info?: { status?: unknown; progress?: unknown };
  hosts?: Array<{ scanprogresscurrent?: unknown; scanprogresstotal?: unknown }>;
}

/** `info.progress` where the server gives it (Tenable), else the mean of the hosts' progress. */
export function scanProgress(details: ScanDetails): number | undefined {
  const overall = Number(details.info?.progress);
  if (details.info?.progress !== undefined && details.info.progress !== null && Number.isFinite(overall) && overall >= 0) return Math.min(overall, 100);
  const hosts = (Array.isArray(details.hosts) ? details.hosts : [])
    .map((host) => ({ current: Number(host?.scanprogresscurrent), total: Number(host?.scanprogresstotal) }))
    .filter(({ current, total }) => Number.isFinite(current) && Number.isFinite(total) && total > 0 && current >= 0);
  if (hosts.length === 0) return undefined;
  return Math.min(100, hosts.reduce((sum, { current, total }) => sum + (100 * Math.min(current, total)) / total, 0) / hosts.length);
}

async function exportReport(api: NessusApi, scanId: string): Promise<string> {
  const answer = (await api.json('POST', `/scans/${scanId}/export`, { format: 'nessus' })) as { file?: unknown };
  return numericId(answer.file, `POST /scans/${scanId}/export`, 'file');
}

async function waitForExport(api: NessusApi, scanId: string, fileId: string, polling: ScanPolling): Promise<void> {
  for (let poll = 0; ; poll++) {
    const answer = (await api.json('GET', `/scans/${scanId}/export/${fileId}/status`)) as { status?: unknown };
    if (answer.status === 'ready') return;
    if (answer.status === 'error') throw new NessusError(`the Nessus server failed to export scan ${scanId} as .nessus`);
    await polling.waitBeforeNextPoll(EXPORT_POLL_DELAYS_MS[Math.min(poll, EXPORT_POLL_DELAYS_MS.length - 1)]!, 'the .nessus export');
  }
}

/** Ids go into URL paths: only digits are accepted. */
function numericId(value: unknown, call: string, field: string): string {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value : '';
  if (!/^\d{1,20}$/.test(text)) throw new NessusError(`the Nessus server's answer to ${call} holds no numeric ${field}`);
  return text;
}

async function* cappedBody(response: Response, call: string): AsyncGenerator<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_NESSUS_REPORT_BYTES) throw tooLarge(call);
  if (response.body === null) throw new NessusError(`the Nessus server's answer to ${call} has no body`);
  let received = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    received += chunk.byteLength;
    if (received > MAX_NESSUS_REPORT_BYTES) throw tooLarge(call);
    yield chunk;
  }
}

function tooLarge(call: string): NessusError {
  return new NessusError(`the Nessus server's answer to ${call} is larger than ${MAX_NESSUS_REPORT_BYTES / (1024 * 1024)} MiB, the limit for reports`);
}

/** Stops a scan still running (Nessus refuses to delete it otherwise) and deletes it; best effort, also after SIGTERM. */
async function deleteScan(api: NessusApi, scanId: string, running: boolean): Promise<void> {
  const options = { cleanup: true, timeoutMs: CLEANUP_TIMEOUT_MS };
  if (running) await api.send('POST', `/scans/${scanId}/stop`, options).catch(() => undefined);
  await api.send('DELETE', `/scans/${scanId}`, options).catch(() => undefined);
}

/** Server-supplied text, made safe for a one-line message. */
function oneLine(text: string, maxChars = 200): string {
  const flat = text
    .replace(/[\x00-\x1f\x7f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > maxChars ? `${flat.slice(0, maxChars)}...` : flat;
}

interface RequestOptions {
  body?: unknown;
  timeoutMs?: number;
  /** Cleanup requests run after SIGTERM too: they ignore the stop signal. */
  cleanup?: boolean;
}

/** Requests with the API keys, each bounded in time and size; a non-2xx answer is a NessusError. */
class NessusApi {
  constructor(
    private readonly settings: NessusSettings,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const { body, timeoutMs = REQUEST_TIMEOUT_MS } = options;
    const headers: Record<string, string> = {
      'X-ApiKeys': `accessKey=${this.settings.accessKey}; secretKey=${this.settings.secretKey}`,
      Accept: 'application/json',
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const stop = options.cleanup === true ? undefined : this.signal;
    const signals = [AbortSignal.timeout(timeoutMs), ...(stop === undefined ? [] : [stop])];
    let response: Response;
    try {
      response = await fetch(`${this.settings.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any(signals),
        redirect: 'error',
      });
    } catch (error) {
      if (stop?.aborted === true) throw error;
      throw this.unreachable(method, path, error);
    }
    if (!response.ok) throw await this.refusal(method, path, response);
    return response;
  }

  async json(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.request(method, path, { body });
    const text = await readCapped(response, MAX_JSON_BYTES, `${method} ${path}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new NessusError(`the Nessus server's answer to ${method} ${path} is not JSON`);
    }
  }

  /** A request whose answer only matters for its status. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<void> {
    const response = await this.request(method, path, options);
    await response.body?.cancel();
  }

  private unreachable(method: string, path: string, error: unknown): NessusError {
    const cause = ((error as Error).cause ?? error) as NodeJS.ErrnoException;
    if (cause?.name === 'TimeoutError') return new NessusError(`the Nessus server at ${this.settings.url} did not answer ${method} ${path} in time`);
    const hint =
      cause?.code !== undefined && UNTRUSTED_CERTIFICATE_CODES.has(cause.code)
        ? "; add the CA that signed the server's certificate with NODE_EXTRA_CA_CERTS"
        : '';
    return new NessusError(`could not reach the Nessus server at ${this.settings.url} (${method} ${path}): ${oneLine(cause?.message ?? String(error))}${hint}`);
  }

  private async refusal(method: string, path: string, response: Response): Promise<NessusError> {
    const text = await readCapped(response, 64 * 1024, `${method} ${path}`).catch(() => '');
    let reason = oneLine(text, 200);
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === 'string') reason = oneLine(parsed.error);
    } catch {
      // Not JSON: the text itself, shortened, is the best explanation there is.
    }
    const why = reason === '' ? '' : `: ${reason}`;
    if (response.status === 412 || /API is not available/i.test(reason)) {
      return new NessusError(
        `the Nessus server refuses to ${method === 'POST' && path === '/scans' ? 'create' : 'run'} scans over its API (${response.status} on ${method} ${path}${why}): ` +
          'Nessus Professional and Expert allow no API scans (pyTenable issues 757 and 840); NESSUS scans need a Tenable edition that does, such as Nessus Manager',
      );
    }
    if (response.status === 401) {
      return new NessusError(
        `the Nessus server refused the API keys (401 on ${method} ${path}${why}); check VIGIL_NESSUS_ACCESS_KEY and VIGIL_NESSUS_SECRET_KEY`,
      );
    }
    return new NessusError(`the Nessus server answered ${response.status} to ${method} ${path}${why}`);
  }
}

async function readCapped(response: Response, maxBytes: number, call: string): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    received += chunk.byteLength;
    if (received > maxBytes) {
      throw new NessusError(`the Nessus server's answer to ${call} is larger than ${Math.round(maxBytes / 1024)} KiB`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
