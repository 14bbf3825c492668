import { Buffer } from 'node:buffer';
import { formatBytes } from '../../domain/bytes.js';
import { MalformedResultError } from '../../domain/errors.js';
import { echoedError, JsonByteChecks, StickyFailure, type JsonInputOptions } from './byte-checks.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, JsonNestingGuard, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './nesting-guard.js';
import { StrictUtf8Decoder } from './strict-utf8-decoder.js';

/**
 * The longest string one result file may hold, in bytes. Real reports carry
 * strings of a few KiB (ZAP evidence, descriptions); a longer one is refused
 * while it streams in, so a hostile file cannot make the parser build one
 * huge string.
 */
const DEFAULT_MAX_STRING_BYTES = 8 * 1024 * 1024;

/**
 * The largest value the reader holds whole before parsing it (a value at the
 * reported depth: one ZAP alert), in bytes. Twice the string cap, so that a
 * value with one string at that cap still fits; real alerts are a few KiB.
 */
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;

export interface JsonStreamOptions extends JsonInputOptions {
  maxStringBytes?: number;
  maxValueBytes?: number;
}

/** An open object or array above the reported depth, built by the reader itself. */
export interface JsonFrame {
  value: Record<string, unknown> | unknown[];
  isArray: boolean;
  /** The key of the member being read (objects), or its index in the file (arrays, counting members the callback dropped). */
  key: string | number | undefined;
}

/**
 * A value the reader has just completed, and where it sits. One object is
 * reused for every value (the callback runs synchronously).
 */
export class CompletedValue {
  value: unknown;
  /** The key or index of the value in its parent; undefined for the document itself. */
  key: string | number | undefined;
  /** The object or array that holds it (undefined for the document); the callback may prune it. */
  parent: unknown;
  /** 0 for the document, 1 for a member of it, and so on. */
  depth = 0;
  /** @internal the reader's open containers; frames[d] is the container at depth d. */
  frames: readonly JsonFrame[] = [];

  /** The key, at depth `at` (1 to depth), of the path to this value. */
  keyAt(at: number): string | number | undefined {
    return at === this.depth ? this.key : this.frames[at - 1]?.key;
  }

  /** The container at depth `at` (0 is the document) on the path to this value. */
  containerAt(at: number): unknown {
    return this.frames[at]?.value;
  }
}

const COMMA = 0x2c;
const COLON = 0x3a;

/** What the reader expects next above the reported depth. */
const EXPECT_VALUE = 0;
/** After '[': a value or ']'. */
const EXPECT_VALUE_OR_CLOSE = 1;
/** After '{': a key or '}'. */
const EXPECT_KEY_OR_CLOSE = 2;
/** After ',' in an object. */
const EXPECT_KEY = 3;
const EXPECT_COLON = 4;
/** After a member: ',' or the container's closing bracket. */
const EXPECT_COMMA_OR_CLOSE = 5;
/** The document is complete: only whitespace may follow. */
const EXPECT_NOTHING = 6;

/** A value read whole: a string or a container (ends at its closing quote or bracket), or a number or literal (ends before the next delimiter). */
const CAPTURE_NESTED = 1;
const CAPTURE_SCALAR = 2;

/** Bytes that end a number or literal. */
const DELIMITER = new Uint8Array(256);
for (const byte of [0x20, 0x09, 0x0a, 0x0d, COMMA, COLON, CLOSE_BRACKET, CLOSE_BRACE, OPEN_BRACKET, OPEN_BRACE, QUOTE]) DELIMITER[byte] = 1;

/**
 * Parses one JSON document as its bytes arrive and calls `onValue` for every
 * value up to `maxReportedDepth` as it completes, innermost first; a value
 * deeper than that stays inside its ancestor at that depth.
 *
 * The bytes are scanned in place, not tokenised: above the reported depth
 * the reader builds the objects and arrays itself (a ZAP report's document
 * and site headers: a few hundred bytes each); a value at the reported depth
 * (a ZAP alert) is delimited by counting brackets outside strings, and its
 * bytes go to the native JSON.parse whole, once. Keys, strings and numbers
 * above that depth go to JSON.parse one by one. The callback decides what to
 * keep: it can drop a completed value from its parent, so memory follows
 * what the caller keeps and the largest single value (capped by
 * maxValueBytes), not the file.
 *
 * The size cap is checked on each write, then UTF-8 (before anything is
 * decoded), then the nesting and string-length caps in the same pass that
 * finds the values. A syntax error is remembered and thrown by end(), after
 * the byte checks of the rest of the file (as JSON.parse of the whole file
 * would order them); a refusal on the bytes throws at once, and so does
 * anything the callback throws. The first error is sticky.
 */
export class JsonStream {
  private readonly checks: JsonByteChecks;
  private readonly sticky = new StickyFailure();
  private readonly decoder = new StrictUtf8Decoder();
  private readonly maxStringBytes: number;
  private readonly maxValueBytes: number;
  private readonly completed = new CompletedValue();
  private readonly frames: JsonFrame[] = [];
  private state = EXPECT_VALUE;
  private firstByte: number | undefined;
  private syntaxError: string | undefined;
  /** After a syntax error, the rest of the file only goes through the byte checks. */
  private rest: JsonNestingGuard | undefined;
  private rootCompleted = false;
  private root: unknown;
  private ended = false;
  /** Bytes before the current write. */
  private offset = 0;

  // The value being read whole.
  private capture = 0;
  private captureIsKey = false;
  /** Where it starts in the current write (0 when it began in an earlier one). */
  private captureStart = 0;
  /** Where it starts in the file, for messages. */
  private captureOffset = 0;
  /**
   * Its bytes from earlier writes, copied into one buffer that doubles when
   * it must (up to maxValueBytes): a value arriving a byte per write costs no
   * per-piece overhead. The buffer is kept for the next value until end():
   * letting a large one go after each value (as was done for buffers over 1
   * MiB) made every large value regrow it from nothing, ~2x its size of
   * garbage outside the V8 heap per value (57 MB for a 25 MB ZAP report of
   * 14 alerts of 1.4-2.2 MB), which V8 does not collect until much later.
   */
  private captured: Buffer = Buffer.alloc(0);
  private capturedBytes = 0;
  private captureDepth = 0;
  private inString = false;
  private escapePending = false;
  private stringBytes = 0;

  constructor(
    readonly format: string,
    options: JsonStreamOptions,
    private readonly onValue: (completed: CompletedValue) => void,
    /** The depth of the values read whole (the document is depth 0). */
    private readonly maxReportedDepth: number,
  ) {
    this.maxStringBytes = options.maxStringBytes ?? DEFAULT_MAX_STRING_BYTES;
    this.maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
    this.checks = new JsonByteChecks(format, { ...options, maxStringBytes: this.maxStringBytes });
    this.completed.frames = this.frames;
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonStream.write called after end');
      this.checks.countBytes(chunk);
      if (!this.decoder.accept(chunk)) throw this.checks.notUtf8();
      if (this.firstByte === undefined) this.firstByte = firstNonSpace(chunk);
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      try {
        if (this.rest !== undefined) this.checkRest(bytes, 0);
        else this.scan(bytes);
      } finally {
        this.offset += bytes.length;
      }
    });
  }

  /** Ends the input; returns what is left of the document after the callback's pruning. */
  end(): unknown {
    try {
      return this.endDocument();
    } finally {
      this.captured = Buffer.alloc(0);
    }
  }

  private endDocument(): unknown {
    return this.guard(() => {
      if (this.ended) throw new Error('JsonStream.end called twice');
      this.ended = true;
      if (!this.decoder.finish()) throw this.checks.notUtf8();
      if (this.firstByte === undefined) throw new MalformedResultError(`The file is empty; expected a ${this.format}.`);
      const context = `The file is not valid JSON (expected a ${this.format})`;
      if (this.firstByte === 0x3c /* '<' */) throw new MalformedResultError(`${context}: it looks like XML or HTML.`);
      // A number or literal that ends the file has no delimiter after it.
      if (this.syntaxError === undefined && this.capture === CAPTURE_SCALAR) this.finishCapture(Buffer.alloc(0), 0);
      if (this.syntaxError === undefined && !this.rootCompleted) this.syntaxError = 'Unexpected end of JSON input';
      if (this.syntaxError !== undefined) throw new MalformedResultError(`${context}: ${echoedError(this.syntaxError)}.`);
      return this.root;
    });
  }

  private scan(bytes: Buffer): void {
    const length = bytes.length;
    let index = 0;
    while (index < length) {
      if (this.capture !== 0) {
        const end = this.capture === CAPTURE_NESTED ? this.scanNested(bytes, index) : scanScalar(bytes, index);
        if (end < 0) {
          this.keepCaptured(bytes);
          return;
        }
        index = end;
        if (!this.finishCapture(bytes, end)) return this.checkRest(bytes, end);
        continue;
      }
      const byte = bytes[index]!;
      index++;
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
      if (!this.step(byte, index - 1)) return this.checkRest(bytes, index);
    }
    // A value that starts with the last byte of the write.
    if (this.capture !== 0) this.keepCaptured(bytes);
  }

  /** One structural byte above the reported depth; false on a syntax error. */
  private step(byte: number, at: number): boolean {
    const state = this.state;
    if ((state === EXPECT_VALUE_OR_CLOSE && byte === CLOSE_BRACKET) || (state === EXPECT_KEY_OR_CLOSE && byte === CLOSE_BRACE)) return this.close();
    switch (state) {
      case EXPECT_VALUE_OR_CLOSE:
      case EXPECT_VALUE:
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          if (this.frames.length < this.maxReportedDepth) return this.open(byte === OPEN_BRACKET);
          if (this.frames.length + 1 > this.checks.maxDepth) throw this.checks.tooDeep();
          this.startCapture(CAPTURE_NESTED, false, at, 1, false);
          return true;
        }
        if (byte === QUOTE) {
          this.startCapture(CAPTURE_NESTED, false, at, 0, true);
          return true;
        }
        // A leading UTF-8 byte-order mark (EF BB BF) is skipped.
        if (state === EXPECT_VALUE && this.frames.length === 0 && this.offset + at < 3 && (byte === 0xef || byte === 0xbb || byte === 0xbf)) return true;
        if (DELIMITER[byte] === 1) return this.unexpected(byte, at);
        this.startCapture(CAPTURE_SCALAR, false, at, 0, false);
        return true;
      case EXPECT_KEY_OR_CLOSE:
      case EXPECT_KEY:
        if (byte !== QUOTE) return this.unexpected(byte, at);
        this.startCapture(CAPTURE_NESTED, true, at, 0, true);
        return true;
      case EXPECT_COLON:
        if (byte !== COLON) return this.unexpected(byte, at);
        this.state = EXPECT_VALUE;
        return true;
      case EXPECT_COMMA_OR_CLOSE: {
        const frame = this.frames[this.frames.length - 1]!;
        if (byte === COMMA) {
          this.state = frame.isArray ? EXPECT_VALUE : EXPECT_KEY;
          return true;
        }
        if (byte === (frame.isArray ? CLOSE_BRACKET : CLOSE_BRACE)) return this.close();
        return this.unexpected(byte, at);
      }
      default:
        return this.fail(`Unexpected non-whitespace character after JSON at byte ${this.offset + at}`);
    }
  }

  private open(isArray: boolean): boolean {
    const value: Record<string, unknown> | unknown[] = isArray ? [] : {};
    this.attach(value);
    this.frames.push({ value, isArray, key: isArray ? 0 : undefined });
    if (this.frames.length > this.checks.maxDepth) throw this.checks.tooDeep();
    this.state = isArray ? EXPECT_VALUE_OR_CLOSE : EXPECT_KEY_OR_CLOSE;
    return true;
  }

  private close(): boolean {
    const frame = this.frames.pop()!;
    this.report(frame.value);
    return true;
  }

  /** Puts a value in its parent (or makes it the document) before the callback sees it. */
  private attach(value: unknown): void {
    const parent = this.frames[this.frames.length - 1];
    if (parent === undefined) this.root = value;
    else if (parent.isArray) (parent.value as unknown[]).push(value);
    else if (parent.key === '__proto__') Object.defineProperty(parent.value, '__proto__', { value, writable: true, enumerable: true, configurable: true });
    else (parent.value as Record<string, unknown>)[parent.key as string] = value;
  }

  /** Hands a completed value (already in its parent) to the callback and moves on to what follows it. */
  private report(value: unknown): void {
    const depth = this.frames.length;
    const parent = this.frames[depth - 1];
    const completed = this.completed;
    completed.value = value;
    completed.key = parent?.key;
    completed.parent = parent?.value;
    completed.depth = depth;
    this.onValue(completed);
    if (parent === undefined) {
      this.rootCompleted = true;
      this.state = EXPECT_NOTHING;
      return;
    }
    if (parent.isArray) parent.key = (parent.key as number) + 1;
    this.state = EXPECT_COMMA_OR_CLOSE;
  }

  private startCapture(kind: number, isKey: boolean, at: number, depth: number, inString: boolean): void {
    this.capture = kind;
    this.captureIsKey = isKey;
    this.captureStart = at;
    this.captureOffset = this.offset + at;
    this.captureDepth = depth;
    this.inString = inString;
    this.stringBytes = 0;
  }

  /**
   * Reads on through a string or a container from `from`: brackets counted
   * outside strings, each string's length counted against the cap. Returns
   * the index after its last byte, or -1 when it goes on in the next write.
   */
  private scanNested(bytes: Buffer, from: number): number {
    const length = bytes.length;
    const base = this.frames.length;
    const maxDepth = this.checks.maxDepth;
    let index = from;
    let depth = this.captureDepth;
    let inString = this.inString;
    let stringStart = index;
    if (this.escapePending) {
      this.escapePending = false;
      index++;
    }
    for (;;) {
      if (inString) {
        // The closing quote is the next quote after an even run of backslashes: found by native indexOf, the
        // backslashes counted back from it (escapes other than \" do not matter to where the string ends).
        for (;;) {
          const quote = index < length ? bytes.indexOf(QUOTE, index) : -1;
          if (quote === -1) {
            // An odd run of backslashes at the end escapes the first byte of the next write.
            this.escapePending = (backslashesBefore(bytes, length, index) & 1) === 1;
            index = length;
            break;
          }
          if ((backslashesBefore(bytes, quote, index) & 1) === 0) {
            index = quote;
            break;
          }
          index = quote + 1;
        }
        if (index >= length) {
          this.stringBytes += length - stringStart;
          if (this.stringBytes > this.maxStringBytes) throw this.checks.stringTooLong(this.maxStringBytes);
          break;
        }
        if (this.stringBytes + index - stringStart > this.maxStringBytes) throw this.checks.stringTooLong(this.maxStringBytes);
        this.stringBytes = 0;
        inString = false;
        index++;
        if (depth === 0) return this.captureEnds(index);
      }
      while (index < length) {
        const byte = bytes[index++]!;
        if (byte === QUOTE) {
          inString = true;
          stringStart = index;
          break;
        }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          if (++depth + base > maxDepth) throw this.checks.tooDeep();
        } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          if (--depth === 0) return this.captureEnds(index);
        }
      }
      if (!inString) break;
    }
    this.captureDepth = depth;
    this.inString = inString;
    return -1;
  }

  private captureEnds(end: number): number {
    this.captureDepth = 0;
    this.inString = false;
    return end;
  }

  /** The captured value goes on in the next write: its bytes so far are copied (the caller may reuse its buffer). */
  private keepCaptured(bytes: Buffer): void {
    this.appendCaptured(bytes, bytes.length);
    this.captureStart = 0;
  }

  private appendCaptured(bytes: Buffer, end: number): void {
    const size = this.capturedBytes + end - this.captureStart;
    if (size > this.maxValueBytes) throw this.valueTooLarge();
    if (size > this.captured.length) {
      const grown = Buffer.allocUnsafe(Math.max(size, Math.min(2 * this.captured.length, this.maxValueBytes), 4096));
      this.captured.copy(grown, 0, 0, this.capturedBytes);
      this.captured = grown;
    }
    bytes.copy(this.captured, this.capturedBytes, this.captureStart, end);
    this.capturedBytes = size;
  }

  /** Parses the captured value, which ends before `end`, and hands it on; false on a syntax error. */
  private finishCapture(bytes: Buffer, end: number): boolean {
    let text: string;
    if (this.capturedBytes === 0) {
      if (end - this.captureStart > this.maxValueBytes) throw this.valueTooLarge();
      text = bytes.toString('utf8', this.captureStart, end);
    } else {
      this.appendCaptured(bytes, end);
      text = this.captured.toString('utf8', 0, this.capturedBytes);
    }
    this.capture = 0;
    this.capturedBytes = 0;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return this.fail(`${reason} (in the value that starts at byte ${this.captureOffset})`);
    }
    if (this.captureIsKey) {
      this.frames[this.frames.length - 1]!.key = value as string;
      this.state = EXPECT_COLON;
      return true;
    }
    this.attach(value);
    this.report(value);
    return true;
  }

  private valueTooLarge(): MalformedResultError {
    const path = formatPath(this.frames.map((frame) => frame.key));
    return new MalformedResultError(
      `The file holds a single value larger than ${formatBytes(this.maxValueBytes)}${path === '' ? '' : ` (at '${path}')`}; no ${this.format} holds one that large.`,
    );
  }

  private unexpected(byte: number, at: number): boolean {
    const shown = byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
    return this.fail(`Unexpected ${shown} at byte ${this.offset + at}`);
  }

  /** Remembers a syntax error (thrown by end()); the rest of the file only has its bytes checked. */
  private fail(message: string): false {
    this.syntaxError = message;
    this.capture = 0;
    this.capturedBytes = 0;
    this.captured = Buffer.alloc(0);
    this.rest = new JsonNestingGuard(this.checks.maxDepth, this.maxStringBytes, this.frames.length);
    return false;
  }

  private checkRest(bytes: Buffer, from: number): void {
    if (this.rest!.accept(bytes.subarray(from))) return;
    throw this.rest!.stringTooLong ? this.checks.stringTooLong(this.maxStringBytes) : this.checks.tooDeep();
  }

  private guard<T>(action: () => T): T {
    return this.sticky.run(action);
  }
}

/** How many backslashes come right before `end`, not looking before `from`. */
function backslashesBefore(bytes: Buffer, end: number, from: number): number {
  let index = end;
  while (index > from && bytes[index - 1] === BACKSLASH) index--;
  return end - index;
}

/** The index of the delimiter that ends a number or literal, or -1 when it goes on in the next write. */
function scanScalar(bytes: Buffer, from: number): number {
  const length = bytes.length;
  for (let index = from; index < length; index++) if (DELIMITER[bytes[index]!] === 1) return index;
  return -1;
}

/** 'site[2].alerts[0]' */
function formatPath(keys: ReadonlyArray<string | number | undefined>): string {
  return keys.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** JSON's whitespace (space, tab, LF, CR) and a UTF-8 byte-order mark are skipped. */
function firstNonSpace(chunk: Uint8Array): number | undefined {
  for (const byte of chunk) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0xef || byte === 0xbb || byte === 0xbf) continue;
    return byte;
  }
  return undefined;
}
