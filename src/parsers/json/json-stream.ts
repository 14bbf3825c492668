import { Tokenizer, TokenizerError, TokenParser, TokenParserError } from '@streamparser/json';
import { MalformedResultError } from '../../domain/errors.js';
import { echoedError, JsonByteChecks, StickyFailure, type JsonInputOptions } from './byte-checks.js';
import { StrictUtf8Decoder } from './strict-utf8-decoder.js';

/**
 * The longest string one result file may hold, in bytes. Real reports carry
 * strings of a few KiB (ZAP evidence, descriptions); a longer one is refused
 * while it streams in, so a hostile file cannot make the parser build one
 * huge string.
 */
export const DEFAULT_MAX_STRING_BYTES = 8 * 1024 * 1024;

export interface JsonStreamOptions extends JsonInputOptions {
  maxStringBytes?: number;
}

interface StackEntry {
  key?: unknown;
  value?: unknown;
}

/**
 * A value the streaming parser has just completed, and where it sits. One
 * object is reused for every value (the callback runs synchronously), so the
 * hot path allocates nothing per value.
 */
export class CompletedValue {
  value: unknown;
  /** The key or index of the value in its parent; undefined for the document itself. */
  key: string | number | undefined;
  /** The object or array that holds it (undefined for the document); the callback may prune it. */
  parent: unknown;
  /** 0 for the document, 1 for a member of it, and so on. */
  depth = 0;
  /** @internal the token parser's stack of open containers. */
  stack: readonly StackEntry[] = [];

  /** The key, at depth `at` (1 to depth), of the path to this value. */
  keyAt(at: number): string | number | undefined {
    return (at === this.depth ? this.key : this.stack[at]?.key) as string | number | undefined;
  }

  /** The container at depth `at` (0 is the document) on the path to this value. */
  containerAt(at: number): unknown {
    return at === this.depth - 1 ? this.parent : this.stack[at + 1]?.value;
  }
}

/**
 * Parses one JSON document as its bytes arrive, with @streamparser/json
 * (a tokenizer and a token parser, no dependencies), calling `onValue` for
 * every value as it completes, innermost first. The callback decides what to
 * keep: it can drop a completed value from its parent, so memory follows
 * what the caller keeps, not the file. The size, nesting, string-length and
 * UTF-8 checks run on the raw bytes of each write, before the tokenizer sees
 * them, so hostile input is refused with bounded memory. A syntax error is
 * remembered and thrown by end(), after the byte checks of the whole file
 * (as JSON.parse of the whole file would order them); a check on the bytes
 * throws at once. The first error is sticky.
 */
export class JsonStream {
  private readonly checks: JsonByteChecks;
  private readonly sticky = new StickyFailure();
  private readonly decoder = new StrictUtf8Decoder();
  private readonly tokenizer: Tokenizer;
  private readonly tokenParser: TokenParser;
  private firstByte: number | undefined;
  private syntaxError: string | undefined;
  private completed = false;
  private root: unknown;
  private ended = false;

  constructor(
    readonly format: string,
    options: JsonStreamOptions,
    onValue: (completed: CompletedValue) => void,
    /** The deepest values the callback sees (the document is depth 0); deeper ones are kept in their parents until those complete. */
    maxReportedDepth = Number.POSITIVE_INFINITY,
  ) {
    this.checks = new JsonByteChecks(format, { ...options, maxStringBytes: options.maxStringBytes ?? DEFAULT_MAX_STRING_BYTES });
    this.tokenizer = new Tokenizer({ stringBufferSize: 64 * 1024, numberBufferSize: 64 });
    const paths = Number.isFinite(maxReportedDepth) ? Array.from({ length: maxReportedDepth + 1 }, (_, depth) => ['$', ...Array<string>(depth).fill('*')].join('.')) : undefined;
    this.tokenParser = new TokenParser({ keepStack: true, ...(paths ? { paths } : {}) });
    const completed = new CompletedValue();
    this.tokenizer.onToken = (token) => this.tokenParser.write(token);
    this.tokenizer.onError = (error) => {
      throw error;
    };
    this.tokenParser.onError = (error) => {
      throw error;
    };
    this.tokenParser.onEnd = () => {};
    this.tokenizer.onEnd = () => {};
    this.tokenParser.onValue = ({ value, key, parent, stack }) => {
      const depth = stack.length;
      if (depth === 0) {
        this.completed = true;
        this.root = value;
      }
      completed.value = value;
      completed.key = key as string | number | undefined;
      completed.parent = parent;
      completed.depth = depth;
      completed.stack = stack as readonly StackEntry[];
      onValue(completed);
    };
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      if (this.ended) throw new Error('JsonStream.write called after end');
      this.checks.accept(chunk);
      if (!this.decoder.accept(chunk)) throw this.checks.notUtf8();
      if (this.firstByte === undefined) this.firstByte = firstNonSpace(chunk);
      if (this.syntaxError !== undefined) return;
      try {
        this.tokenizer.write(chunk);
      } catch (error) {
        // Only the library's own errors say the JSON is broken; anything else (a refusal from the callback, a bug) goes up as it is.
        if (!(error instanceof TokenizerError || error instanceof TokenParserError)) throw error;
        this.syntaxError = error.message;
      }
    });
  }

  /** Ends the input; returns what is left of the document after the callback's pruning. */
  end(): unknown {
    return this.guard(() => {
      if (this.ended) throw new Error('JsonStream.end called twice');
      this.ended = true;
      if (!this.decoder.finish()) throw this.checks.notUtf8();
      if (this.firstByte === undefined) throw new MalformedResultError(`The file is empty; expected a ${this.format}.`);
      const context = `The file is not valid JSON (expected a ${this.format})`;
      if (this.firstByte === 0x3c /* '<' */) throw new MalformedResultError(`${context}: it looks like XML or HTML.`);
      if (this.syntaxError === undefined && !this.completed) this.syntaxError = 'Unexpected end of JSON input';
      if (this.syntaxError !== undefined) throw new MalformedResultError(`${context}: ${echoedError(this.syntaxError)}.`);
      return this.root;
    });
  }

  private guard<T>(action: () => T): T {
    return this.sticky.run(action);
  }
}

/** JSON's whitespace (space, tab, LF, CR) and a UTF-8 byte-order mark are skipped. */
function firstNonSpace(chunk: Uint8Array): number | undefined {
  for (const byte of chunk) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0xef || byte === 0xbb || byte === 0xbf) continue;
    return byte;
  }
  return undefined;
}

