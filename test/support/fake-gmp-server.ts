/**
 * A fake Greenbone manager (gvmd) speaking just enough GMP for the OpenVAS
 * driver, on a Unix socket or over TLS. It records every command it receives
 * (name, attributes, the text and attributes of each descendant) and answers
 * like gvmd: authenticate, create_target, create_task, start_task, get_tasks
 * (a scripted sequence of task states), get_reports (a given <report>
 * element), stop_task and delete_*. Answers can be written in small pieces,
 * and one answer can be cut off by closing the connection.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { SaxesParser } from 'saxes';

export const FAKE_GMP_IDS = {
  target: '6b1ad4e3-0b5a-4bb9-9d3c-1f4f2b6a7c01',
  task: '7c2be5f4-1c6b-4cca-8e4d-2a5a3c7b8d02',
  report: '8d3cf6a5-2d7c-4ddb-9f5e-3b6b4d8c9e03',
} as const;

export interface ReceivedCommand {
  name: string;
  attributes: Record<string, string>;
  /** Descendants by path below the command ('credentials/username', 'port_list'). */
  children: Record<string, { text: string; attributes: Record<string, string> }>;
  /** Which connection (1, 2, ...) the command came on. */
  connection: number;
}

export interface TaskState {
  status: string;
  progress: number;
}

export interface FakeGmpOptions {
  /** Listen on this Unix socket; otherwise TLS on 127.0.0.1 with `tls`. */
  socketPath?: string;
  tls?: { key: string; cert: string };
  username?: string;
  password?: string;
  /** What successive get_tasks answers say; the last one repeats. */
  taskStates?: TaskState[];
  /** The <report> element get_reports answers with. */
  report: string | Buffer;
  /** Answers are written in pieces of this many bytes, each in its own write. */
  chunkSize?: number;
  /** The first answer to this command stops halfway and the connection closes. */
  closeMidAnswerTo?: string;
  /** An answer of the test's own for a command, instead of the usual one. */
  answerOverride?: (command: ReceivedCommand) => string | undefined;
}

export interface FakeGmpServer {
  /** The value for VIGIL_OPENVAS_GMP. */
  address: string;
  commands: ReceivedCommand[];
  close(): Promise<void>;
}

export const DEFAULT_FAKE_CREDENTIALS = { username: 'vigil', password: 's3cret&<pass>' } as const;

export async function startFakeGmpServer(options: FakeGmpOptions): Promise<FakeGmpServer> {
  const commands: ReceivedCommand[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let getTasksCount = 0;
  let cutOff = false;
  const handle = (socket: Socket) => {
    connections += 1;
    const connection = connections;
    let authenticated = false;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    readCommands(socket, connection, async (command) => {
      commands.push(command);
      if (command.name === 'authenticate') authenticated = isLogin(command, options);
      const answer =
        options.answerOverride?.(command) ??
        answerTo(command, authenticated, () => options.taskStates?.[Math.min(getTasksCount++, options.taskStates.length - 1)], options);
      const bytes = Buffer.from(answer);
      if (options.closeMidAnswerTo === command.name && !cutOff) {
        cutOff = true;
        await writeInPieces(socket, bytes.subarray(0, Math.floor(bytes.byteLength / 2)), options.chunkSize);
        socket.destroy();
        return;
      }
      await writeInPieces(socket, bytes, options.chunkSize);
    });
  };
  const server: Server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, handle) : createNetServer(handle);
  const address = await new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    if (options.socketPath !== undefined) server.listen(options.socketPath, () => resolve(`unix://${options.socketPath}`));
    else server.listen(0, '127.0.0.1', () => resolve(`tls://127.0.0.1:${(server.address() as { port: number }).port}`));
  });
  return {
    address,
    commands,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function isLogin(command: ReceivedCommand, options: FakeGmpOptions): boolean {
  return (
    command.children['credentials/username']?.text === (options.username ?? DEFAULT_FAKE_CREDENTIALS.username) &&
    command.children['credentials/password']?.text === (options.password ?? DEFAULT_FAKE_CREDENTIALS.password)
  );
}

function answerTo(command: ReceivedCommand, authenticated: boolean, nextTaskState: () => TaskState | undefined, options: FakeGmpOptions): string {
  const { name, attributes } = command;
  if (name === 'authenticate') {
    return authenticated
      ? '<authenticate_response status="200" status_text="OK"><role>Admin</role><timezone>UTC</timezone></authenticate_response>'
      : '<authenticate_response status="400" status_text="Authentication failed"/>';
  }
  if (!authenticated) return `<${name}_response status="401" status_text="Authenticate first"/>`;
  switch (name) {
    case 'create_target':
      return `<create_target_response status="201" status_text="OK, resource created" id="${FAKE_GMP_IDS.target}"/>`;
    case 'create_task':
      return `<create_task_response status="201" status_text="OK, resource created" id="${FAKE_GMP_IDS.task}"/>`;
    case 'start_task':
      return `<start_task_response status="202" status_text="OK, request submitted"><report_id>${FAKE_GMP_IDS.report}</report_id></start_task_response>`;
    case 'get_tasks':
      return taskAnswer(nextTaskState() ?? { status: 'Done', progress: -1 });
    case 'get_reports':
      if (attributes.report_id !== FAKE_GMP_IDS.report) return '<get_reports_response status="404" status_text="Failed to find report"/>';
      // As gvmd: GET_REPORTS chooses the format by `format_id`; without it the answer is not the XML report asked for.
      if (attributes.format_id === undefined) return '<get_reports_response status="400" status_text="Report format missing: GET_REPORTS takes format_id"/>';
      return (
        '<get_reports_response status="200" status_text="OK">' +
        options.report.toString() +
        '<filters id=""><term>apply_overrides=0 min_qod=0 rows=-1 first=1 sort-reverse=severity</term><keywords/></filters>' +
        '<sort><field>severity<order>descending</order></field></sort><reports start="1" max="-1"/>' +
        '<report_count>1<filtered>1</filtered><page>1</page></report_count></get_reports_response>'
      );
    case 'stop_task':
      return '<stop_task_response status="202" status_text="OK, request submitted"/>';
    case 'delete_task':
    case 'delete_target':
      return `<${name}_response status="200" status_text="OK"/>`;
    default:
      return '<gmp_response status="400" status_text="Bogus command name"/>';
  }
}

function taskAnswer(state: TaskState): string {
  return (
    `<get_tasks_response status="200" status_text="OK"><apply_overrides>0</apply_overrides>` +
    `<task id="${FAKE_GMP_IDS.task}"><name>vigil</name><status>${state.status}</status><progress>${state.progress}</progress>` +
    `<report_count>1<finished>0</finished></report_count></task>` +
    `<filters id=""><term>apply_overrides=0 first=1 rows=10 sort=name</term></filters>` +
    `<tasks start="1" max="10"/><task_count>1<filtered>1</filtered><page>1</page></task_count></get_tasks_response>`
  );
}

async function writeInPieces(socket: Socket, bytes: Buffer, chunkSize = bytes.byteLength): Promise<void> {
  for (let offset = 0; offset < bytes.byteLength; offset += chunkSize) {
    if (socket.destroyed) return;
    await new Promise<void>((resolve) => socket.write(bytes.subarray(offset, offset + chunkSize), () => resolve()));
    // A pause between pieces, so that the client reads them one by one.
    if (chunkSize < bytes.byteLength) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Splits the client's stream into commands: each is one top-level element. */
function readCommands(socket: Socket, connection: number, onCommand: (command: ReceivedCommand) => Promise<void>): void {
  let parser = newCommandParser();
  let queue = Promise.resolve();
  function newCommandParser(): SaxesParser {
    const next = new SaxesParser({ xmlns: false, fragment: true });
    const path: string[] = [];
    let command: ReceivedCommand | undefined;
    next.on('opentag', (tag) => {
      if (command === undefined) {
        command = { name: tag.name, attributes: { ...tag.attributes }, children: {}, connection };
      } else {
        path.push(tag.name);
        command.children[path.join('/')] = { text: '', attributes: { ...tag.attributes } };
      }
    });
    next.on('text', (text) => {
      const child = command?.children[path.join('/')];
      if (child !== undefined) child.text += text;
    });
    next.on('closetag', () => {
      if (path.length > 0) {
        path.pop();
        return;
      }
      const complete = command!;
      command = undefined;
      parser = newCommandParser();
      queue = queue.then(() => onCommand(complete));
    });
    next.on('error', () => socket.destroy());
    return next;
  }
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => parser.write(text));
}

/**
 * A throwaway self-signed certificate for 127.0.0.1 and localhost, made with
 * the openssl command line; it is its own CA (the file for *_CA_FILE or
 * NODE_EXTRA_CA_CERTS).
 */
export function throwawayCertificate(dir: string): { key: string; cert: string; certFile: string } {
  const keyFile = join(dir, 'server-key.pem');
  const certFile = join(dir, 'server-cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=vigil-test',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
