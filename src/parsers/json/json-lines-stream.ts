import { Buffer } from 'node:buffer';
import { MalformedResultError } from '../../domain/errors.js';
import { echoedError, JsonByteChecks, StickyFailure, type JsonInputOptions } from './byte-checks.js';
import { JsonInput, type JsonRecord } from './json-input.js';
import { StrictUtf8Decoder } from './strict-utf8-decoder.js';

const NEWLINE = 0x0a;

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
  private readonly checks: JsonByteChecks;
  private readonly sticky = new StickyFailure();
  private readonly decoder = new StrictUtf8Decoder();
  private mode: 'undecided' | 'lines' | 'whole' = 'undecided';
  /** Every byte so far, while the form of the file is not known or is not JSON Lines. */
  private kept: Uint8Array[] = [];
  /** The bytes of the line not yet ended. */
  private partial: Uint8Array[] = [];
  private atStart = true;
  private lineNumber = 0;
  private deferred: MalformedResultError | undefined;
  private ended = false;

  constructor(
    readonly format: string,
    private readonly options: JsonInputOptions,
    private readonly onRecord: (record: JsonRecord) => void,
    private readonly urgent: (error: MalformedResultError) => boolean = () => false,
  ) {
    this.checks = new JsonByteChecks(format, options);
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonLinesStream.write called after end');
      this.checks.accept(chunk);
      if (!this.decoder.accept(chunk)) throw this.checks.notUtf8();
      if (this.mode !== 'lines') this.kept.push(chunk);
      if (this.mode === 'whole') return;
      this.split(chunk);
    });
  }

  end(): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonLinesStream.end called twice');
      this.ended = true;
      if (!this.decoder.finish()) throw this.checks.notUtf8();
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

  private guard<T>(action: () => T): T {
    return this.sticky.run(action);
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
  return new MalformedResultError(`${context}: ${echoedError(reason)}.`);
}
