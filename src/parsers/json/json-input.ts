import type { z } from 'zod';
import { MalformedResultError } from '../../domain/errors.js';

/** Upload limit of DESIGN.md decision 11; a larger result file is refused while it streams in. */
export const DEFAULT_MAX_BYTES = 25 * 1024 * 1024;

/**
 * Real scanner output nests at most ~16 levels (sslyze certificate details).
 * The cap keeps hostile input ('[' x 100k) from reaching code that walks the
 * parsed value recursively, and is checked on the raw bytes before JSON.parse.
 */
export const DEFAULT_MAX_DEPTH = 64;

export interface JsonInputOptions {
  maxBytes?: number;
  maxDepth?: number;
}

/** One record of a JSON Lines file (or one element of a top-level array) and where it came from. */
export interface JsonRecord {
  /** 'line 3' or 'item 3' (1-based), for error messages. */
  where: string;
  value: unknown;
}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const MAX_ECHOED_ERROR = 160;

/**
 * Collects the bytes of one JSON or JSON Lines result file as they arrive.
 *
 * Bytes are decoded incrementally into string pieces (strict UTF-8, so a split
 * multi-byte character is fine and a non-UTF-8 byte is an error at once) and
 * joined once at the end: the only full-size copies are the text and the value
 * JSON.parse builds from it. Size and nesting caps are enforced on each chunk,
 * so an oversized or hostile upload is refused before it is buffered.
 * The first error is sticky: later writes and reads rethrow it.
 */
export class JsonInput {
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pieces: string[] = [];
  private byteCount = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private failure: MalformedResultError | undefined;
  private finishedText: string | undefined;

  /** `format` names the expected format in messages, e.g. 'ZAP Traditional JSON report'. */
  constructor(
    readonly format: string,
    options: JsonInputOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.finishedText !== undefined) throw new Error('JsonInput.write called after the input was read');
      this.byteCount += chunk.byteLength;
      if (this.byteCount > this.maxBytes) {
        throw new MalformedResultError(
          `The ${this.format} is larger than the ${formatBytes(this.maxBytes)} limit; split the scan or raise the limit.`,
        );
      }
      this.trackNesting(chunk);
      this.pieces.push(this.decode(chunk, true));
    });
  }

  /** The whole decoded text; a leading byte-order mark is dropped. */
  text(): string {
    return this.guard(() => {
      if (this.finishedText === undefined) {
        this.pieces.push(this.decode(new Uint8Array(0), false));
        this.finishedText = this.pieces.join('');
        this.pieces = [];
      }
      return this.finishedText;
    });
  }

  /** True when the file held nothing but whitespace. */
  isBlank(): boolean {
    return this.text().trim() === '';
  }

  /** Parses the input as one JSON document; an empty file is an error. */
  parseDocument(): unknown {
    const text = this.text();
    if (text.trim() === '') throw this.fail(`The file is empty; expected a ${this.format}.`);
    return this.guard(() => parseJson(text, `The file is not valid JSON (expected a ${this.format})`));
  }

  /**
   * Parses JSON Lines: one value per non-blank line, the last line may lack a
   * newline. A file whose first character is '[' is read as one JSON array
   * instead (some tools export the same records that way). Empty file: no records.
   */
  parseRecords(): JsonRecord[] {
    const text = this.text();
    const start = text.search(/\S/);
    if (start === -1) return [];
    if (text[start] === '[') {
      const value = this.parseDocument();
      if (!Array.isArray(value)) throw this.fail(`The file is not a JSON array (expected a ${this.format}).`);
      return value.map((item, index) => ({ where: `item ${index + 1}`, value: item }));
    }
    return this.guard(() => parseJsonLines(text));
  }

  private decode(chunk: Uint8Array, stream: boolean): string {
    try {
      return this.decoder.decode(chunk, { stream });
    } catch {
      throw new MalformedResultError(
        `The file is not UTF-8 text (an invalid byte appears before byte ${this.byteCount}); expected a ${this.format}.`,
      );
    }
  }

  /**
   * Counts bracket depth outside strings. JSON's structural characters are
   * ASCII and never occur inside a UTF-8 multi-byte sequence, so bytes can be
   * scanned without decoding, and chunk boundaries do not matter.
   */
  private trackNesting(chunk: Uint8Array): void {
    let { depth, inString, escaped } = this;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE || byte === NEWLINE) inString = false; // a raw newline ends a broken line
      } else if (byte === QUOTE) {
        inString = true;
      } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
        if (++depth > this.maxDepth) {
          throw new MalformedResultError(
            `The file nests JSON arrays or objects more than ${this.maxDepth} levels deep; no ${this.format} does that.`,
          );
        }
      } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
        depth--;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }

  private fail(message: string): MalformedResultError {
    this.failure = new MalformedResultError(message);
    return this.failure;
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

function parseJsonLines(text: string): JsonRecord[] {
  const records: JsonRecord[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.trim() === '') continue;
    const where = `line ${index + 1}`;
    records.push({ where, value: parseJson(line, `${capitalize(where)} is not valid JSON`) });
  }
  return records;
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
    throw new MalformedResultError(`${context}: ${truncate(reason, MAX_ECHOED_ERROR)}.`);
  }
}

/** How a value should look, for a sentence like "expected an object with a 'site' array (ZAP ...); got an array". */
export interface ShapeExpectation {
  /** The expected format, e.g. 'ZAP Traditional JSON report'. */
  format: string;
  /** What the checked value should be, e.g. "an object with a 'site' array". */
  expected: string;
  /** Where the value sits in the file when it is not the whole document, e.g. 'line 3'. */
  where?: string;
}

/**
 * Validates a parsed value with a zod schema and returns the schema's output.
 * A mismatch becomes a MalformedResultError naming the first offending path,
 * what was found there, and the format that was expected.
 */
export function checkShape<S extends z.ZodType>(value: unknown, schema: S, expectation: ShapeExpectation): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const detail = issue ? describeIssue(value, issue) : 'it does not match';
  const prefix = expectation.where ? `At ${expectation.where}: expected` : 'Expected';
  throw new MalformedResultError(`${prefix} ${expectation.expected} (${expectation.format}); ${detail}.`);
}

type Issue = z.core.$ZodIssue;

function describeIssue(root: unknown, issue: Issue): string {
  const path = issue.path;
  const actual = valueAt(root, path);
  if (path.length === 0) return issue.code === 'invalid_type' ? `got ${describeValue(actual)}` : issue.message;
  const where = `'${formatPath(path)}'`;
  if (issue.code === 'invalid_type') {
    if (actual === undefined) return `${where} is missing${describeKeys(valueAt(root, path.slice(0, -1)))}`;
    return `${where} is ${describeValue(actual)}, not ${withArticle(issue.expected)}`;
  }
  // Schemas in this folder phrase their own messages as predicates ("must be 0 to 3"); zod's defaults are sentences.
  return /^[a-z]/.test(issue.message) ? `${where} ${issue.message}` : `${where}: ${issue.message}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

/** Plain-English kind of a JSON value: 'an array', 'a string', 'null'... */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return 'nothing';
}

function describeKeys(parent: unknown): string {
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return '';
  const keys = Object.keys(parent);
  if (keys.length === 0) return ' (the object is empty)';
  const shown = keys.slice(0, 5).map((key) => truncate(key, 40));
  return ` (the object has ${shown.join(', ')}${keys.length > 5 ? ', ...' : ''})`;
}

function withArticle(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
