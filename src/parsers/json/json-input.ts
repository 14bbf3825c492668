import { Buffer } from 'node:buffer';
import { MalformedResultError } from '../../domain/errors.js';
import { echoedError, JsonByteChecks, StickyFailure, type JsonInputOptions } from './byte-checks.js';
import { StrictUtf8Decoder } from './strict-utf8-decoder.js';

export { DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, type JsonInputOptions } from './byte-checks.js';

/** One record of a JSON Lines file (or one element of a top-level array) and where it came from. */
export interface JsonRecord {
  /** 'line 3' or 'item 3' (1-based), for error messages. */
  where: string;
  value: unknown;
}

const STAGING_BYTES = 128 * 1024;

/**
 * Collects the bytes of one JSON or JSON Lines result file as they arrive.
 *
 * Bytes are decoded while they arrive into string pieces (strict UTF-8: a
 * multi-byte character split between writes is fine, a non-UTF-8 byte is an
 * error) and joined once at the end; the bytes themselves are not kept, so
 * the only full-size copies are the text and the value JSON.parse builds.
 * Size and nesting caps are enforced on each write, so an oversized or
 * hostile upload is refused before it is buffered. The first error is
 * sticky: later writes and reads rethrow it.
 */
export class JsonInput {
  private readonly checks: JsonByteChecks;
  private readonly sticky = new StickyFailure();
  private readonly decoder = new StrictUtf8Decoder();
  private pieces: string[] = [];
  /**
   * Bytes are decoded in 128 KiB steps, not per write: fewer, larger pieces
   * skip V8's young-generation copying (measured on 13-22 MiB reports: peak
   * memory 3.1-3.3x the file size instead of up to 4.5x with 64 KiB pieces).
   */
  private readonly staged = new Uint8Array(STAGING_BYTES);
  private stagedLength = 0;
  private read = false;

  /** `format` names the expected format in messages, e.g. 'ZAP Traditional JSON report'. */
  constructor(
    readonly format: string,
    options: JsonInputOptions = {},
  ) {
    this.checks = new JsonByteChecks(format, options);
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.read) throw new Error('JsonInput.write called after the input was read');
      this.checks.accept(chunk);
      this.stage(chunk);
    });
  }

  /**
   * The whole decoded text, without a leading byte-order mark. It can be read
   * once: the input keeps no reference, so the text can be collected as soon
   * as the caller has parsed it.
   */
  text(): string {
    return this.guard(() => {
      if (this.read) throw new Error('JsonInput text read twice');
      this.flushStaged();
      if (!this.decoder.finish()) throw this.checks.notUtf8();
      this.read = true;
      const text = this.pieces.join('');
      this.pieces = [];
      return text;
    });
  }

  /** Parses the input as one JSON document; an empty file is an error. */
  parseDocument(): unknown {
    return this.parseWhole(this.text());
  }

  /**
   * Reads JSON Lines: one value per non-blank line, the last line may lack a
   * newline. Values are parsed one at a time as the caller iterates, so a
   * big file's records are never all in memory at once. A file whose first
   * character is '[' is read as one JSON array instead (some tools export
   * the same records that way), and a file that is one pretty-printed object
   * as that single record. Empty file: no records.
   */
  *records(): Generator<JsonRecord> {
    const text = this.text();
    const start = text.search(/\S/);
    if (start === -1) return;
    if (text[start] === '[') {
      const value = this.parseWhole(text);
      if (!Array.isArray(value)) throw this.sticky.fail(`The file is not a JSON array (expected a ${this.format}).`);
      for (let index = 0; index < value.length; index++) yield { where: `item ${index + 1}`, value: value[index] };
      return;
    }
    yield* this.guardEach(jsonLines(text));
  }

  private *guardEach(records: Iterable<JsonRecord>): Generator<JsonRecord> {
    const iterator = records[Symbol.iterator]();
    for (;;) {
      const next = this.guard(() => iterator.next());
      if (next.done) return;
      yield next.value;
    }
  }

  private parseWhole(text: string): unknown {
    if (text.trim() === '') throw this.sticky.fail(`The file is empty; expected a ${this.format}.`);
    return this.guard(() => parseJson(text, `The file is not valid JSON (expected a ${this.format})`));
  }

  private stage(chunk: Uint8Array): void {
    for (let offset = 0; offset < chunk.length;) {
      const taken = Math.min(chunk.length - offset, STAGING_BYTES - this.stagedLength);
      this.staged.set(chunk.subarray(offset, offset + taken), this.stagedLength);
      this.stagedLength += taken;
      offset += taken;
      if (this.stagedLength === STAGING_BYTES) this.flushStaged();
    }
  }

  private flushStaged(): void {
    if (this.stagedLength === 0) return;
    this.pieces.push(this.decode(this.staged.subarray(0, this.stagedLength)));
    this.stagedLength = 0;
  }

  private decode(chunk: Uint8Array): string {
    const text = this.decoder.decode(chunk);
    if (text === null) throw this.checks.notUtf8();
    const previous = this.pieces[this.pieces.length - 1] ?? '';
    return escapeWideCharacters(text, previous.endsWith('\\'));
  }

  private guard<T>(action: () => T): T {
    return this.sticky.run(action);
  }
}

const WIDE_CHARACTER = /[^\u0000-\u00ff]/;
const UNESCAPED_WIDE_CHARACTERS = /(?<!\\)[^\u0000-\u00ff]/g;

/**
 * One character above U+00FF makes V8 store the whole joined text with two
 * bytes per character, doubling the largest allocation for a report that is
 * almost all ASCII. In JSON such characters can only stand inside strings,
 * where a \uXXXX escape means the same, so they are written as escapes
 * (surrogate pairs as two). A character right after a backslash is left
 * alone: escaping it would change what an escape sequence means.
 */
function escapeWideCharacters(piece: string, previousEndsWithBackslash: boolean): string {
  if (!WIDE_CHARACTER.test(piece)) return piece;
  const escaped = piece.replace(UNESCAPED_WIDE_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const first = piece.charAt(0);
  const result = previousEndsWithBackslash && WIDE_CHARACTER.test(first) ? first + escaped.slice(6) : escaped;
  // replace() builds its result in the subject's two-byte form; a latin1 round trip stores it one byte per character.
  return WIDE_CHARACTER.test(result) ? result : Buffer.from(result, 'latin1').toString('latin1');
}

/**
 * One record per non-blank line. A pretty-printed single object spans many
 * lines (another tool's report, `jq .` output): when the first line is not
 * JSON but the whole text is one object, that object is the only record, so
 * the caller can say what it is instead of reporting line 1 as broken.
 */
function* jsonLines(text: string): Generator<JsonRecord> {
  let lineStart = 0;
  let lineNumber = 0;
  let isFirstRecord = true;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    lineNumber++;
    lineStart = lineEnd + 1;
    if (line.trim() === '') continue;
    const where = `line ${lineNumber}`;
    if (isFirstRecord) {
      isFirstRecord = false;
      const first = tryJsonParse(line);
      if (first.parsed) {
        yield { where, value: first.value };
        continue;
      }
      const whole = tryJsonParse(text);
      if (whole.parsed && whole.value !== null && typeof whole.value === 'object') return yield { where, value: whole.value };
    }
    yield { where, value: parseJson(line, `${capitalize(where)} is not valid JSON`) };
  }
}

function tryJsonParse(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) as unknown };
  } catch {
    return { parsed: false };
  }
}

function parseJson(text: string, context: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (text.trimStart().startsWith('<')) {
      throw new MalformedResultError(`${context}: it looks like XML or HTML.`);
    }
    // V8's message quotes a few characters of the input; cap it so a message never carries much of an upload.
    const reason = error instanceof Error ? error.message : String(error);
    throw new MalformedResultError(`${context}: ${echoedError(reason)}.`);
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
