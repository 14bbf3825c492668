/**
 * What every JSON reader (JsonInput, JsonStream, JsonLinesStream) shares: the
 * caps checked on the raw bytes of each write before anything is parsed, the
 * wording of their refusals, and the sticky first error.
 */
import { formatBytes } from '../../domain/bytes.js';
import { MalformedResultError } from '../../domain/errors.js';
import { JsonNestingGuard } from './nesting-guard.js';

/** Upload limit of DESIGN.md decision 11; a larger result file is refused while it streams in. */
export const DEFAULT_MAX_BYTES = 25 * 1024 * 1024;

/**
 * Real scanner output nests at most ~16 levels (sslyze certificate details).
 * The cap keeps hostile input ('[' x 100k) from reaching code that walks the
 * parsed value recursively, and is checked on the raw bytes before parsing.
 */
export const DEFAULT_MAX_DEPTH = 64;

export interface JsonInputOptions {
  maxBytes?: number;
  maxDepth?: number;
}

/** How much of a parser's error message (which may quote the input) a refusal repeats. */
const MAX_ECHOED_ERROR = 160;

/** A parser's error message, capped so that a refusal never carries much of an upload. */
export function echoedError(reason: string): string {
  return reason.length <= MAX_ECHOED_ERROR ? reason : `${reason.slice(0, MAX_ECHOED_ERROR - 3)}...`;
}

/** The size, nesting and (when given) string-length caps, counted over the bytes of every write. */
export class JsonByteChecks {
  readonly maxBytes: number;
  readonly maxDepth: number;
  private readonly nesting: JsonNestingGuard;
  /** Bytes written so far. */
  byteCount = 0;

  constructor(
    private readonly format: string,
    options: JsonInputOptions & { maxStringBytes?: number },
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.nesting = new JsonNestingGuard(this.maxDepth, options.maxStringBytes);
  }

  /** Counts the chunk and throws the refusal naming the first cap it passes. */
  accept(chunk: Uint8Array): void {
    this.countBytes(chunk);
    if (this.nesting.accept(chunk)) return;
    throw this.nesting.stringTooLong ? this.stringTooLong(this.nesting.maxStringBytes) : this.tooDeep();
  }

  /**
   * Counts the chunk against the size cap only, for a reader that checks the
   * nesting and string lengths in its own pass over the bytes (JsonStream).
   */
  countBytes(chunk: Uint8Array): void {
    this.byteCount += chunk.byteLength;
    if (this.byteCount > this.maxBytes) {
      throw new MalformedResultError(`The ${this.format} is larger than the ${formatBytes(this.maxBytes)} limit; split the scan or raise the limit.`);
    }
  }

  /** The refusal of a file nested deeper than maxDepth. */
  tooDeep(): MalformedResultError {
    return new MalformedResultError(`The file nests JSON arrays or objects more than ${this.maxDepth} levels deep; no ${this.format} does that.`);
  }

  /** The refusal of a string longer than `maxStringBytes`. */
  stringTooLong(maxStringBytes: number): MalformedResultError {
    return new MalformedResultError(`The file holds a string longer than ${formatBytes(maxStringBytes)}; no ${this.format} does that.`);
  }

  /** The refusal of bytes that are not UTF-8, placed by the bytes read so far. */
  notUtf8(): MalformedResultError {
    return new MalformedResultError(`The file is not UTF-8 text (an invalid byte appears before byte ${this.byteCount}); expected a ${this.format}.`);
  }
}

/** The first MalformedResultError a reader meets is sticky: every later write and read throws it again. */
export class StickyFailure {
  private failure: MalformedResultError | undefined;

  run<T>(action: () => T): T {
    if (this.failure) throw this.failure;
    try {
      return action();
    } catch (error) {
      if (error instanceof MalformedResultError) this.failure = error;
      throw error;
    }
  }

  /** Records a refusal of the reader's own and returns it, to be thrown. */
  fail(message: string): MalformedResultError {
    this.failure = new MalformedResultError(message);
    return this.failure;
  }
}
