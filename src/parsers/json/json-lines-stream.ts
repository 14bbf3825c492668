import { formatBytes } from '../../domain/bytes.js';
import { Buffer } from 'node:buffer';
import { MalformedResultError } from '../../domain/errors.js';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, JsonInput, type JsonInputOptions, type JsonRecord } from './json-input.js';
import { JsonNestingGuard } from './nesting-guard.js';
import { StrictUtf8Decoder } from './strict-utf8-decoder.js';

const NEWLINE = 0x0a;
const MAX_ECHOED_ERROR = 160;

/**
 * JSON Lines read as the bytes arrive: each line is parsed and handed to
 * `onRecord` as soon as its newline comes, then dropped, so memory follows
 * the longest line, not the file. The records, their `where` and every
 * error are those of JsonInput.records(), in the same order: the size,
 * nesting and UTF-8 checks run on each write; an error in a line (or thrown
 * by `onRecord` as a MalformedResultError) is kept and thrown by end(), after
 * the byte checks of the rest of the file, and no later line is read. The
 * two other forms JsonInput.records() accepts, a top-level array and one
 * pretty-printed object, are told apart from JSON Lines by the first
 * non-blank line (it starts with '[', or is not JSON by itself); those files
 * are kept and read whole by JsonInput at the end, as before. `onRecord` may
 * throw `urgent` errors (the findings cap) to refuse at once.
 */
export class JsonLinesStream {
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private readonly nesting: JsonNestingGuard;
  private readonly decoder = new StrictUtf8Decoder();
  private mode: 'undecided' | 'lines' | 'whole' = 'undecided';
  /** Every byte so far, while the form of the file is not known or is not JSON Lines. */
  private kept: Uint8Array[] = [];
  /** The bytes of the line not yet ended. */
  private partial: Uint8Array[] = [];
  private atStart = true;
  private lineNumber = 0;
  private byteCount = 0;
  private deferred: MalformedResultError | undefined;
  private failure: MalformedResultError | undefined;
  private ended = false;

  constructor(
    readonly format: string,
    private readonly options: JsonInputOptions,
    private readonly onRecord: (record: JsonRecord) => void,
    private readonly urgent: (error: MalformedResultError) => boolean = () => false,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.nesting = new JsonNestingGuard(this.maxDepth);
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonLinesStream.write called after end');
      this.byteCount += chunk.byteLength;
      if (this.byteCount > this.maxBytes) {
        throw new MalformedResultError(`The ${this.format} is larger than the ${formatBytes(this.maxBytes)} limit; split the scan or raise the limit.`);
      }
      if (!this.nesting.accept(chunk)) {
        throw new MalformedResultError(`The file nests JSON arrays or objects more than ${this.maxDepth} levels deep; no ${this.format} does that.`);
      }
      if (!this.decoder.accept(chunk)) throw this.notUtf8();
      if (this.mode !== 'lines') this.kept.push(chunk);
      if (this.mode === 'whole') return;
      this.split(chunk);
    });
  }

  end(): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonLinesStream.end called twice');
      this.ended = true;
      if (!this.decoder.finish()) throw this.notUtf8();
      if (this.mode === 'lines') {
        if (this.deferred === undefined) this.line(Buffer.concat(this.partial));
        this.partial = [];
        if (this.deferred) throw this.deferred;
        return;
      }
      // Not JSON Lines, or no complete line yet: read the file whole, exactly as before.
      const input = new JsonInput(this.format, { ...this.options, maxBytes: Number.POSITIVE_INFINITY });
      for (const piece of this.kept) input.write(piece);
      this.kept = [];
      for (const record of input.records()) this.onRecord(record);
    });
  }

  private split(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.atStart && bytes.length > 0) {
      this.atStart = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    }
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(NEWLINE, start);
      if (newline === -1) break;
      this.partial.push(bytes.subarray(start, newline));
      const line = this.partial.length === 1 ? this.partial[0]! : Buffer.concat(this.partial);
      this.partial = [];
      start = newline + 1;
      if (this.deferred === undefined) this.line(line);
      if (this.mode === 'whole') return;
    }
    // Copied: the caller may reuse its buffer.
    if (start < bytes.length) this.partial.push(bytes.slice(start));
  }

  private line(bytes: Uint8Array): void {
    this.lineNumber++;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    const line = this.lineNumber === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (line.trim() === '') return;
    const where = `line ${this.lineNumber}`;
    if (this.mode === 'undecided') {
      const first = tryJsonParse(line);
      if (line.trimStart().startsWith('[') || !first.parsed) {
        this.mode = 'whole';
        return;
      }
      this.mode = 'lines';
      this.kept = [];
      this.record({ where, value: first.value });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.deferred = invalidLine(line, where, error);
      return;
    }
    this.record({ where, value });
  }

  private record(record: JsonRecord): void {
    try {
      this.onRecord(record);
    } catch (error) {
      if (!(error instanceof MalformedResultError) || this.urgent(error)) throw error;
      this.deferred = error;
    }
  }

  private notUtf8(): MalformedResultError {
    return new MalformedResultError(`The file is not UTF-8 text (an invalid byte appears before byte ${this.byteCount}); expected a ${this.format}.`);
  }

  private guard<T>(action: () => T): T {
    if (this.failure) throw this.failure;
    try {
      return action();
    } catch (error) {
      if (error instanceof MalformedResultError) this.failure = error;
      throw error;
    }
  }
}

function tryJsonParse(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) as unknown };
  } catch {
    return { parsed: false };
  }
}

/** The message JsonInput gives for the same line. */
function invalidLine(line: string, where: string, error: unknown): MalformedResultError {
  const context = `${where.charAt(0).toUpperCase()}${where.slice(1)} is not valid JSON`;
  if (line.trimStart().startsWith('<')) return new MalformedResultError(`${context}: it looks like XML or HTML.`);
  const reason = error instanceof Error ? error.message : String(error);
  return new MalformedResultError(`${context}: ${reason.length <= MAX_ECHOED_ERROR ? reason : `${reason.slice(0, MAX_ECHOED_ERROR - 3)}...`}.`);
}

