/**
 * Reads a multipart/form-data request with busboy (DESIGN.md decision 11).
 * Limits hold while the body streams: an oversized file, a second file part
 * or a bad field is refused at the byte that breaks the rule; the rest of
 * the body reaches no parser: the error response reads and discards it within
 * bounds, then closes the connection (refused-body.ts).
 * Fields are small strings; the one file part goes to the caller chunk by
 * chunk and is never buffered here.
 */
import busboy from 'busboy';
import type { Request, Response } from 'express';
import { Buffer } from 'node:buffer';
import { yieldToEventLoop } from '../app/event-loop.js';
import { InvalidRequestError } from '../domain/errors.js';

export interface MultipartLimits {
  /** Name of the one file part. */
  fileField: string;
  maxFileBytes: number;
  maxFields: number;
  maxFieldBytes: number;
  /** What the file is, for the size refusal ('an uploaded result' when absent). */
  fileDescription?: string;
}

export interface MultipartCallbacks {
  /** Each field as it arrives; throw to refuse the request at once. */
  onField(name: string, value: string): void;
  /** Each chunk of the file part as it arrives; throw to refuse the request at once. */
  onFileChunk(chunk: Buffer): void;
}

export interface MultipartForm {
  fields: Record<string, string>;
  /** True when the form had the file part. */
  hasFile: boolean;
  /** The file part's file name as the client sent it, when it sent one. */
  fileName?: string;
}

export function readMultipartForm(req: Request, res: Response, limits: MultipartLimits, callbacks: MultipartCallbacks): Promise<MultipartForm> {
  return new Promise((resolve, reject) => new MultipartFormReader(req, res, limits, callbacks, resolve, reject).start());
}

/** The most of the file one turn of the event loop hands on (about 100 nmap findings, 10-20 ms to parse and stage). */
const FILE_PIECE_BYTES = 16 * 1024;

/**
 * busboy hands a part whose Content-Disposition has no name with the name
 * undefined (issue 26: a TypeError, 500, further on): refused as the client's mistake.
 */
function named(name: string | undefined): string {
  if (name === undefined || name === '') {
    throw new InvalidRequestError('a part of the multipart body has no name; give every part one in its header: Content-Disposition: form-data; name="..."');
  }
  return name;
}

class MultipartFormReader {
  /** No prototype: a field named '__proto__' is just a field. */
  private readonly fields: Record<string, string> = Object.create(null) as Record<string, string>;
  private hasFile = false;
  private fileName: string | undefined;
  private settled = false;
  private parser: busboy.Busboy | undefined;
  /** A chunk of the file is being handed on in pieces (handOver); busboy may close meanwhile. */
  private handingOver = false;
  private closed = false;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly limits: MultipartLimits,
    private readonly callbacks: MultipartCallbacks,
    private readonly resolve: (form: MultipartForm) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(): void {
    try {
      this.parser = busboy({ headers: this.req.headers, defParamCharset: 'utf8', limits: this.busboyLimits() });
    } catch (error) {
      this.fail(new InvalidRequestError(`the request body must be multipart/form-data with a boundary (${(error as Error).message})`));
      return;
    }
    this.parser.on('field', (name: string | undefined, value, info) => this.guard(() => this.field(named(name), value, info.valueTruncated)));
    this.parser.on('file', (name: string | undefined, stream, info) => {
      // A part that arrives after a refusal is never read, and destroying the parser errors it: unlistened, that error would end the process.
      stream.on('error', () => undefined);
      this.guard(() => this.file(named(name), stream, info.filename));
    });
    this.parser.on('filesLimit', () =>
      this.fail(new InvalidRequestError(`send exactly one file part '${this.limits.fileField}'; this form has more than one file`)),
    );
    this.parser.on('fieldsLimit', () => this.fail(new InvalidRequestError(`the form has more than ${this.limits.maxFields} fields`)));
    this.parser.on('partsLimit', () => this.fail(new InvalidRequestError(`the form has more than ${this.limits.maxFields + 1} parts`)));
    this.parser.on('error', (error: Error) => this.fail(new InvalidRequestError(`the multipart body is malformed: ${error.message}`)));
    this.parser.on('close', () => {
      // busboy closes once it has handed on the last chunk, maybe before every piece of it reached the caller.
      this.closed = true;
      if (!this.handingOver) this.succeed();
    });
    this.req.on('error', (error) => this.fail(error));
    this.req.pipe(this.parser);
  }

  private busboyLimits(): busboy.Limits {
    return {
      // busboy reports 'limit' once a file reaches fileSize bytes, so one more byte than allowed.
      fileSize: this.limits.maxFileBytes + 1,
      files: 1,
      fields: this.limits.maxFields,
      fieldSize: this.limits.maxFieldBytes,
      parts: this.limits.maxFields + 1,
    };
  }

  private field(name: string, value: string, truncated: boolean): void {
    if (truncated) throw new InvalidRequestError(`field '${name.slice(0, 40)}' is longer than ${this.limits.maxFieldBytes} bytes`);
    if (Object.hasOwn(this.fields, name)) throw new InvalidRequestError(`field '${name.slice(0, 40)}' is sent more than once`);
    this.fields[name] = value;
    this.callbacks.onField(name, value);
  }

  private file(name: string, stream: NodeJS.ReadableStream, fileName: string | undefined): void {
    if (name !== this.limits.fileField) {
      throw new InvalidRequestError(`the file part must be named '${this.limits.fileField}', not '${name.slice(0, 40)}'`);
    }
    this.hasFile = true;
    this.fileName = fileName;
    stream.on('error', (error: Error) => this.fail(new InvalidRequestError(`the multipart body is malformed: ${error.message}`)));
    stream.on('data', (chunk: Buffer) => {
      // A piece of at most FILE_PIECE_BYTES per turn of the event loop: a socket's poll hands over all it
      // holds at once, and parsing a few megabytes of a result file in one turn held the loop 80-180 ms
      // (bench/scale.ts); so did a single 64 KiB chunk, about 400 nmap findings, 90-170 ms while the parser
      // was not yet optimised. Paused, the file holds back the request body, which holds back the socket.
      stream.pause();
      this.handingOver = true;
      this.handOver(chunk, 0, () => {
        this.handingOver = false;
        stream.resume();
        if (this.closed) this.succeed();
      });
    });
    stream.on('limit', () =>
      this.fail(
        new InvalidRequestError(
          `the file is larger than ${this.limits.maxFileBytes / 1024 / 1024} MiB, the limit for ${this.limits.fileDescription ?? 'an uploaded result'}`,
        ),
      ),
    );
  }

  /** Hands the chunk to onFileChunk from `offset`, a piece per turn, then calls `done` (not after a refusal: the rest is never read). */
  private handOver(chunk: Buffer, offset: number, done: () => void): void {
    const end = Math.min(chunk.length, offset + FILE_PIECE_BYTES);
    this.guard(() => this.callbacks.onFileChunk(offset === 0 && end === chunk.length ? chunk : chunk.subarray(offset, end)));
    if (this.settled) return;
    void yieldToEventLoop().then(() => (end < chunk.length ? this.handOver(chunk, end, done) : done()));
  }

  private guard(step: () => void): void {
    if (this.settled) return;
    try {
      step();
    } catch (error) {
      this.fail(error);
    }
  }

  private succeed(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve({ fields: this.fields, hasFile: this.hasFile, ...(this.fileName === undefined ? {} : { fileName: this.fileName }) });
  }

  /** Stops parsing: what the client has not sent yet is discarded by the refusal (refused-body.ts), never parsed. */
  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const parser = this.parser;
    if (parser !== undefined) {
      this.req.unpipe(parser);
      // Not at once: this may run inside busboy's own write, which still uses its state.
      setImmediate(() => parser.destroy());
    }
    this.reject(error);
  }
}
