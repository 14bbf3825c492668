/**
 * Runs one OpenVAS scan through the Greenbone manager (gvmd) for
 * `vigil scanner openvas`: a target and a task for the hosts, started and
 * followed until Done, then the report in GMP's XML report format, saved as
 * the `<report>` element gvmd sent. The task and target are deleted
 * afterwards, also after a failure (best effort: a scan result matters more
 * than tidiness in gvmd).
 */
import { UNTRUSTED_CERTIFICATE_CODES, type ScanPolling } from './scanner-polling.js';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { OpenVasSettings } from '../config/settings.js';
import {
  GmpConnection,
  GmpError,
  GmpStatusError,
  childElement,
  childText,
  describeGmpEndpoint,
  escapeXml,
  type GmpAnswer,
  type GmpSendOptions,
} from './gmp-client.js';

/** GMP's built-in "XML" report format. */
const XML_REPORT_FORMAT_ID = 'a994b278-1f62-11e1-96ac-406186ea4fc5';
/** Reports of large networks reach tens of MB; this leaves room and still bounds memory. */
const MAX_OPENVAS_REPORT_BYTES = 256 * 1024 * 1024;
/**
 * Every result, unpaged and without overrides: Vigil applies the account's
 * minimum QoD itself (SPEC.md), while gvmd's default filter drops QoD < 70.
 */
const REPORT_FILTER = 'apply_overrides=0 min_qod=0 rows=-1 first=1 sort-reverse=severity';
/** Polls come quickly at first, for short scans, then every 10 s. */
const POLL_DELAYS_MS = [1_000, 2_000, 5_000, 10_000];
const FAILED_TASK_STATUSES = new Set(['Stopped', 'Stop Requested', 'Interrupted', 'Delete Requested', 'Ultimate Delete Requested']);
export interface OpenVasScanRequest {
  settings: OpenVasSettings;
  hosts: string[];
  polling: ScanPolling;
  onProgress(percent: number): void;
  /** Receives the report's bytes; resolves once they are stored. */
  saveReport(chunks: Iterable<Uint8Array>): Promise<void>;
  /** Connection attempts and silent answers fail after this long (default 5 minutes). */
  timeoutMs?: number;
}

interface CreatedObjects {
  targetId?: string;
  taskId?: string;
  finished?: boolean;
}

export async function runOpenVasScan(request: OpenVasScanRequest): Promise<void> {
  const session = new GreenboneSession(request.settings, await readCaFile(request.settings.caFile), request.timeoutMs);
  const created: CreatedObjects = {};
  try {
    await session.connect();
    const name = scanObjectName(request.polling.now());
    created.targetId = await createTarget(session, name, request);
    created.taskId = await createTask(session, name, created.targetId, request.settings);
    const reportId = await startTask(session, created.taskId);
    await waitForTask(session, created.taskId, request);
    created.finished = true;
    await request.saveReport(await fetchReport(session, reportId));
  } finally {
    await deleteCreatedObjects(session, created);
    session.close();
  }
}

/** Unique, because gvmd refuses a second target with the same name. */
function scanObjectName(now: Date): string {
  return `vigil ${now.toISOString()} ${randomBytes(4).toString('hex')}`;
}

async function readCaFile(path: string | undefined): Promise<Buffer | undefined> {
  if (path === undefined) return undefined;
  try {
    return await readFile(path);
  } catch (error) {
    throw new Error(`could not read VIGIL_OPENVAS_CA_FILE ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

function createdId(answer: GmpAnswer, command: string): string {
  const id = answer.element.attributes.id ?? '';
  if (id === '') throw new GmpError(`the Greenbone manager's answer to <${command}> holds no id`);
  return id;
}

async function createTarget(session: GreenboneSession, name: string, request: OpenVasScanRequest): Promise<string> {
  const inner =
    `<name>${escapeXml(name)}</name>` + `<hosts>${escapeXml(request.hosts.join(','))}</hosts>` + `<port_list id="${escapeXml(request.settings.portListId)}"/>`;
  return createdId(await session.send('create_target', {}, inner), 'create_target');
}

async function createTask(session: GreenboneSession, name: string, targetId: string, settings: OpenVasSettings): Promise<string> {
  const inner =
    `<name>${escapeXml(name)}</name>` +
    `<config id="${escapeXml(settings.scanConfigId)}"/>` +
    `<target id="${escapeXml(targetId)}"/>` +
    `<scanner id="${escapeXml(settings.scannerId)}"/>`;
  return createdId(await session.send('create_task', {}, inner), 'create_task');
}

async function startTask(session: GreenboneSession, taskId: string): Promise<string> {
  const answer = await session.send('start_task', { task_id: taskId });
  const reportId = childText(answer.element, 'report_id') ?? '';
  if (reportId === '') throw new GmpError(`the Greenbone manager's answer to <start_task> holds no report_id`);
  return reportId;
}

async function waitForTask(session: GreenboneSession, taskId: string, request: OpenVasScanRequest): Promise<void> {
  for (let poll = 0; ; poll++) {
    const answer = await session.send('get_tasks', { task_id: taskId });
    const task = childElement(answer.element, 'task');
    if (task === undefined) throw new GmpError(`the Greenbone manager's answer to <get_tasks> holds no task ${taskId}`);
    const status = childText(task, 'status') ?? '';
    if (status === 'Done') {
      request.onProgress(100);
      return;
    }
    if (FAILED_TASK_STATUSES.has(status)) {
      throw new GmpError(`the OpenVAS task ended as '${status}' before the scan was done; gvmd's log says why`);
    }
    // gvmd reports -1 while a task is queued or not running.
    const progress = Number.parseFloat(childText(task, 'progress') ?? '');
    if (Number.isFinite(progress) && progress >= 0) request.onProgress(Math.min(progress, 100));
    await request.polling.waitBeforeNextPoll(POLL_DELAYS_MS[Math.min(poll, POLL_DELAYS_MS.length - 1)]!, 'the OpenVAS scan');
  }
}

async function fetchReport(session: GreenboneSession, reportId: string): Promise<Buffer[]> {
  const attributes = {
    report_id: reportId,
    details: '1',
    ignore_pagination: '1',
    // gvmd's GET_REPORTS reads `format_id` (src/gmp.c); `report_format_id` belongs to other commands and is ignored here.
    format_id: XML_REPORT_FORMAT_ID,
    filter: REPORT_FILTER,
  };
  const answer = await session.send('get_reports', attributes, '', { maxBytes: MAX_OPENVAS_REPORT_BYTES, keepChild: 'report' });
  if (answer.kept === undefined) throw new GmpError(`the Greenbone manager's answer to <get_reports> holds no <report> for report ${reportId}`);
  return answer.kept;
}

/**
 * Best effort: a refusal (say, a task not running any more) moves on to the
 * next object; a manager that cannot be reached ends the cleanup, rather
 * than waiting for a connection timeout once per object.
 */
async function deleteCreatedObjects(session: GreenboneSession, created: CreatedObjects): Promise<void> {
  const attempt = (name: string, attributes: Record<string, string>): Promise<boolean> =>
    session.send(name, attributes).then(
      () => true,
      (error: unknown) => error instanceof GmpStatusError,
    );
  if (created.taskId !== undefined) {
    if (created.finished !== true && !(await attempt('stop_task', { task_id: created.taskId }))) return;
    if (!(await attempt('delete_task', { task_id: created.taskId, ultimate: '1' }))) return;
  }
  if (created.targetId !== undefined) await attempt('delete_target', { target_id: created.targetId, ultimate: '1' });
}

/**
 * One authenticated GMP connection. A connection that closed between two
 * commands (gvmd restarted, an idle connection dropped while the driver
 * slept) is opened and authenticated again before the next command; a
 * connection lost in the middle of an answer fails that command.
 */
class GreenboneSession {
  private connection: GmpConnection | undefined;

  constructor(
    private readonly settings: OpenVasSettings,
    private readonly ca: Buffer | undefined,
    private readonly timeoutMs: number | undefined,
  ) {}

  async connect(): Promise<void> {
    this.connection?.close();
    this.connection = undefined;
    const connection = await GmpConnection.open(this.settings.endpoint, { ca: this.ca, timeoutMs: this.timeoutMs }).catch((error: unknown) => {
      throw this.explainConnectFailure(error);
    });
    try {
      const credentials = `<credentials><username>${escapeXml(this.settings.username)}</username><password>${escapeXml(this.settings.password)}</password></credentials>`;
      await connection.send('authenticate', {}, credentials);
    } catch (error) {
      connection.close();
      throw this.explainLoginFailure(error);
    }
    this.connection = connection;
  }

  async send(name: string, attributes: Record<string, string> = {}, inner = '', options: GmpSendOptions = {}): Promise<GmpAnswer> {
    if (this.connection?.usable !== true) await this.connect();
    return this.connection!.send(name, attributes, inner, options);
  }

  close(): void {
    this.connection?.close();
  }

  private explainConnectFailure(error: unknown): unknown {
    if (!(error instanceof GmpError) || error.code === undefined || !UNTRUSTED_CERTIFICATE_CODES.has(error.code)) return error;
    return new GmpError(`${error.message}; set VIGIL_OPENVAS_CA_FILE to the PEM file of the CA that signed gvmd's certificate`, error.code);
  }

  private explainLoginFailure(error: unknown): unknown {
    if (!(error instanceof GmpStatusError)) return error;
    return new GmpError(
      `the Greenbone manager at ${describeGmpEndpoint(this.settings.endpoint)} refused the login (status ${error.status}: ${error.statusText}); check VIGIL_OPENVAS_USERNAME and VIGIL_OPENVAS_PASSWORD`,
    );
  }
}
