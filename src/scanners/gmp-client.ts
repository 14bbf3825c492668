/**
 * A minimal Greenbone Management Protocol (GMP) client: one connection to
 * gvmd over TLS or its Unix socket, one XML command at a time. GMP has no
 * framing: each answer is one top-level XML element, read until its end tag.
 * Answers are parsed with saxes, refuse DOCTYPEs and are capped in size; a
 * report answer can keep one child element as the exact bytes gvmd sent, so
 * a report of tens of MB is written out as is instead of rebuilt.
 */
import { createConnection, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import type { GmpEndpoint } from '../config/settings.js';

/** Small answers (authenticate, create_*, get_tasks of one task) stay far below this. */
const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
/** GMP answers nest about 10 levels deep; more is a malformed or hostile answer. */
const MAX_DEPTH = 64;

/** Anything that went wrong talking GMP; the message is one sentence. */
export class GmpError extends Error {
  constructor(
    message: string,
    /** The socket or TLS error code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...), when there was one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** gvmd answered a command with a status outside 2xx. */
export class GmpStatusError extends GmpError {
  constructor(
    readonly command: string,
    readonly status: string,
    readonly statusText: string,
  ) {
    super(`the Greenbone manager refused <${command}> with status ${status} (${statusText || 'no status text'})`);
  }
}

export interface GmpElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The element's own character data, without its children's. */
  text: string;
  readonly children: GmpElement[];
}

export interface GmpAnswer {
  element: GmpElement;
  /** The bytes of the child named in `keepChild`, as gvmd sent them; undefined when absent. */
  kept: Buffer[] | undefined;
}

export interface GmpSendOptions {
  maxBytes?: number;
  /**
   * A direct child of the answer to keep as raw bytes (for get_reports: 'report').
   * Its descendants are not added to the element tree.
   */
  keepChild?: string;
}

export interface GmpConnectOptions {
  /** PEM certificates of the CA that signed gvmd's certificate (TLS only); default: the system's trusted CAs. */
  ca?: string | Buffer;
  /** A connection attempt, or an answer that stays silent, fails after this long. */
  timeoutMs?: number;
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** `<name a="v">inner</name>`; `inner` is XML already (escape text with escapeXml). */
function gmpElementXml(name: string, attributes: Record<string, string> = {}, inner = ''): string {
  const attributeText = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(value)}"`)
    .join('');
  return inner === '' ? `<${name}${attributeText}/>` : `<${name}${attributeText}>${inner}</${name}>`;
}

export function childElement(element: GmpElement, name: string): GmpElement | undefined {
  return element.children.find((child) => child.name === name);
}

/** The trimmed text of the element at `path` below `element`, or undefined. */
export function childText(element: GmpElement, ...path: string[]): string | undefined {
  let current: GmpElement | undefined = element;
  for (const name of path) current = current === undefined ? undefined : childElement(current, name);
  return current?.text.trim();
}

export function describeGmpEndpoint(endpoint: GmpEndpoint): string {
  if (endpoint.kind === 'unix') return `unix://${endpoint.path}`;
  return `tls://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
}

/** Server-supplied text, made safe for a one-line message. */
export function oneLine(text: string, maxChars = 200): string {
  const flat = text
    .replace(/[\x00-\x1f\x7f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > maxChars ? `${flat.slice(0, maxChars)}...` : flat;
}

interface PendingCommand {
  name: string;
  reader: GmpAnswerReader;
  resolve(answer: GmpAnswer): void;
  reject(error: Error): void;
}

export class GmpConnection {
  private pending: PendingCommand | undefined;
  private closedBecause: string | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly where: string,
    private readonly timeoutMs: number,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('timeout', () => this.onTimeout());
    socket.on('error', (error: NodeJS.ErrnoException) =>
      this.onClosed(`the connection to the Greenbone manager at ${where} broke (${oneLine(error.message)})`, error.code),
    );
    socket.on('close', () => this.onClosed(`the Greenbone manager at ${where} closed the connection`));
  }

  static open(endpoint: GmpEndpoint, options: GmpConnectOptions = {}): Promise<GmpConnection> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const where = describeGmpEndpoint(endpoint);
    return new Promise((resolve, reject) => {
      const socket =
        endpoint.kind === 'unix'
          ? createConnection({ path: endpoint.path })
          : connectTls({
              host: endpoint.host,
              port: endpoint.port,
              ca: options.ca,
              rejectUnauthorized: true,
              ...(isIP(endpoint.host) === 0 ? { servername: endpoint.host } : {}),
            });
      socket.setTimeout(timeoutMs);
      const fail = (reason: string, code?: string) => {
        socket.destroy();
        reject(new GmpError(`could not connect to the Greenbone manager at ${where}: ${reason}`, code));
      };
      const onError = (error: NodeJS.ErrnoException) => fail(oneLine(error.message), error.code);
      const onTimeout = () => fail(`no connection within ${Math.round(timeoutMs / 1000)} s`);
      socket.once('error', onError);
      socket.once('timeout', onTimeout);
      socket.once(endpoint.kind === 'unix' ? 'connect' : 'secureConnect', () => {
        socket.off('error', onError);
        socket.off('timeout', onTimeout);
        resolve(new GmpConnection(socket, where, timeoutMs));
      });
    });
  }

  /** False once the connection closed or broke; a new one is needed then. */
  get usable(): boolean {
    return this.closedBecause === undefined;
  }

  /** Sends `<name attributes>inner</name>` and resolves with gvmd's 2xx answer; anything else rejects with a GmpError. */
  send(name: string, attributes: Record<string, string> = {}, inner = '', options: GmpSendOptions = {}): Promise<GmpAnswer> {
    if (this.pending !== undefined) return Promise.reject(new Error(`GMP commands go one at a time; <${this.pending.name}> is still waiting for its answer`));
    if (this.closedBecause !== undefined) {
      return Promise.reject(new GmpError(`could not send <${name}> to the Greenbone manager at ${this.where}: ${this.closedBecause}`));
    }
    return new Promise<GmpAnswer>((resolve, reject) => {
      this.pending = { name, reader: new GmpAnswerReader(name, options), resolve, reject };
      this.socket.write(gmpElementXml(name, attributes, inner));
    });
  }

  close(): void {
    this.closedBecause ??= 'the connection was closed';
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const pending = this.pending;
    if (pending === undefined) {
      this.fail('the Greenbone manager sent data nobody asked for');
      return;
    }
    try {
      pending.reader.write(chunk);
    } catch (error) {
      this.fail((error as Error).message, error as Error);
      return;
    }
    if (!pending.reader.complete) return;
    this.pending = undefined;
    try {
      pending.resolve(pending.reader.answer());
    } catch (error) {
      pending.reject(error as Error);
    }
  }

  private onTimeout(): void {
    const pending = this.pending;
    if (pending === undefined) return; // idle between polls: nothing is owed
    this.fail(`the Greenbone manager at ${this.where} did not answer <${pending.name}> within ${Math.round(this.timeoutMs / 1000)} s`);
  }

  private onClosed(reason: string, code?: string): void {
    if (this.closedBecause !== undefined && this.pending === undefined) return;
    this.closedBecause ??= reason;
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    const received = pending.reader.receivedBytes;
    const when = received > 0 ? `in the middle of its answer to <${pending.name}> (after ${received} bytes)` : `before answering <${pending.name}>`;
    pending.reject(new GmpError(`${reason} ${when}`, code));
  }

  /** A protocol error: the stream is out of step with the commands, so the connection is dropped. */
  private fail(message: string, error?: Error): void {
    const pending = this.pending;
    this.pending = undefined;
    this.closedBecause ??= message;
    this.socket.destroy();
    pending?.reject(error instanceof GmpError ? error : new GmpError(message));
  }
}

/**
 * Reads one answer from bytes in any split. Offsets of the kept child are
 * counted in bytes: saxes reports positions as indexes into the decoded text,
 * converted here with the byte length of the text decoded so far.
 */
class GmpAnswerReader {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly parser = new SaxesParser({ xmlns: false });
  private readonly stack: GmpElement[] = [];
  private readonly chunks: Buffer[] = [];
  private readonly maxBytes: number;
  private root: GmpElement | undefined;
  private text = '';
  private charsBeforeText = 0;
  private bytesBeforeText = 0;
  private keepNext = false;
  private keptDepth = 0;
  private keptStart: number | undefined;
  private keptEnd: number | undefined;
  receivedBytes = 0;
  complete = false;

  constructor(
    private readonly command: string,
    private readonly options: GmpSendOptions,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    const parser = this.parser;
    parser.on('error', (error) => this.malformed(error.message.replace(/^\d+:\d+: /, '').replace(/\.$/, '')));
    parser.on('doctype', () => this.malformed('it declares a DOCTYPE, which GMP answers never do'));
    parser.on('opentagstart', (tag) => this.onOpenTagStart(tag.name));
    parser.on('opentag', (tag) => this.onOpenTag(tag));
    parser.on('closetag', () => this.onCloseTag());
    parser.on('text', (text) => this.onText(text));
  }

  write(chunk: Buffer): void {
    this.receivedBytes += chunk.byteLength;
    if (this.receivedBytes > this.maxBytes) {
      throw new GmpError(`the answer to <${this.command}> is larger than ${Math.round(this.maxBytes / (1024 * 1024))} MiB, the limit for it`);
    }
    if (this.options.keepChild !== undefined) this.chunks.push(chunk);
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw new GmpError(`the answer to <${this.command}> is not valid UTF-8 (near byte ${this.receivedBytes})`);
    }
    this.text = text;
    this.parser.write(text);
    this.charsBeforeText += text.length;
    this.bytesBeforeText += Buffer.byteLength(text);
  }

  answer(): GmpAnswer {
    const element = this.root!;
    const status = element.attributes.status ?? '';
    if (!/^2\d\d$/.test(status)) throw new GmpStatusError(this.command, status || 'missing', oneLine(element.attributes.status_text ?? ''));
    const kept = this.keptStart !== undefined && this.keptEnd !== undefined ? sliceChunks(this.chunks, this.keptStart, this.keptEnd) : undefined;
    return { element, kept };
  }

  private malformed(reason: string): never {
    throw new GmpError(`the Greenbone manager's answer to <${this.command}> is not acceptable XML: ${oneLine(reason)}`);
  }

  private onOpenTagStart(name: string): void {
    if (this.keptDepth > 0 || this.stack.length !== 1 || name !== this.options.keepChild || this.keptStart !== undefined) return;
    this.keepNext = true;
    // The parser stands just after '<name' and the blank (one or two characters: CRLF) that ended it; all ASCII.
    const after = this.byteOffset(this.parser.position);
    const start = [after - name.length - 2, after - name.length - 3].find((offset) => startsWithAt(this.chunks, offset, `<${name}`));
    if (start === undefined) this.malformed(`the start of <${name}> could not be located`);
    this.keptStart = start;
  }

  private onOpenTag(tag: SaxesTagPlain): void {
    if (this.keptDepth > 0) {
      this.keptDepth += 1;
      if (this.keptDepth + this.stack.length > MAX_DEPTH) this.malformed(`it nests elements more than ${MAX_DEPTH} levels deep`);
      return;
    }
    const element: GmpElement = { name: tag.name, attributes: tag.attributes, text: '', children: [] };
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      if (this.root !== undefined) this.malformed('it has more than one top-level element');
      if (tag.name !== `${this.command}_response` && tag.name !== 'gmp_response') this.malformed(`it is <${tag.name}>, not <${this.command}_response>`);
      this.root = element;
    } else {
      parent.children.push(element);
    }
    if (this.keepNext) {
      this.keepNext = false;
      this.keptDepth = 1;
      return;
    }
    if (this.stack.length >= MAX_DEPTH) this.malformed(`it nests elements more than ${MAX_DEPTH} levels deep`);
    this.stack.push(element);
  }

  private onCloseTag(): void {
    if (this.keptDepth > 0) {
      this.keptDepth -= 1;
      if (this.keptDepth === 0) this.keptEnd = this.byteOffset(this.parser.position);
      return;
    }
    this.stack.pop();
    if (this.stack.length === 0) this.complete = true;
  }

  private onText(text: string): void {
    if (this.keptDepth > 0) return;
    const current = this.stack[this.stack.length - 1];
    if (current !== undefined) current.text += text;
    else if (text.trim() !== '') this.malformed('it has text outside its element');
  }

  /** The byte offset of a saxes position (an index into all text decoded so far). */
  private byteOffset(position: number): number {
    const intoText = position - this.charsBeforeText;
    // Negative only for a CR that saxes carried over from the previous text: one byte per character.
    if (intoText < 0) return this.bytesBeforeText + intoText;
    return this.bytesBeforeText + Buffer.byteLength(this.text.slice(0, intoText));
  }
}

function startsWithAt(chunks: readonly Buffer[], offset: number, ascii: string): boolean {
  if (offset < 0) return false;
  const bytes = Buffer.concat(sliceChunks(chunks, offset, offset + ascii.length));
  return bytes.toString('latin1') === ascii;
}

/** The bytes [start, end) of the concatenated chunks, as views into them (no copy). */
function sliceChunks(chunks: readonly Buffer[], start: number, end: number): Buffer[] {
  const views: Buffer[] = [];
  let offset = 0;
  for (const chunk of chunks) {
    const chunkEnd = offset + chunk.byteLength;
    if (chunkEnd > start && offset < end) views.push(chunk.subarray(Math.max(0, start - offset), Math.min(chunk.byteLength, end - offset)));
    offset = chunkEnd;
    if (offset >= end) break;
  }
  return views;
}
