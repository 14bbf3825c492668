import { Buffer } from 'node:buffer';

/** JSON's structural bytes (ASCII), shared by the byte-level readers. */
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/**
 * Tracks how deeply a JSON text nests arrays and objects, over raw bytes in
 * any chunking: JSON's structural characters are ASCII and never occur inside
 * a UTF-8 multi-byte sequence. Strings, where most of a scanner report's bytes
 * are, are skipped with native indexOf instead of byte by byte.
 */
export class JsonNestingGuard {
  private depth = 0;
  private inString = false;
  /** The previous chunk ended on a backslash inside a string, so this chunk's first byte is escaped. */
  private escapePending = false;
  /** Bytes of the string being read so far (escapes counted as written). */
  private stringBytes = 0;
  /** True once accept() returned false for a string over maxStringBytes rather than for the nesting. */
  stringTooLong = false;

  constructor(
    private readonly maxDepth: number,
    readonly maxStringBytes = Number.POSITIVE_INFINITY,
    /** The nesting already open before the first byte this guard sees (a reader handing over the rest of a file). */
    initialDepth = 0,
  ) {
    this.depth = initialDepth;
  }

  /** Scans the next chunk; false as soon as the nesting, or one string, exceeds its limit. */
  accept(chunk: Uint8Array): boolean {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = bytes.length;
    let index = 0;
    if (this.escapePending && length > 0) {
      this.escapePending = false;
      index = 1;
    }
    // Next quote and backslash at or after `index` (length when none), searched again only once passed,
    // so each byte of string content is looked at by native code about twice.
    let quote = -1;
    let backslash = -1;
    while (index < length) {
      if (!this.inString) {
        const byte = bytes[index++];
        if (byte === QUOTE) {
          this.inString = true;
          this.stringBytes = 0;
        } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
          if (++this.depth > this.maxDepth) return false;
        } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) this.depth--;
        continue;
      }
      if (quote < index) quote = nextIndexOf(bytes, QUOTE, index);
      if (backslash < index) backslash = nextIndexOf(bytes, BACKSLASH, index);
      const from = index;
      if (backslash < quote) {
        // An escape before the closing quote: skip the backslash and the character it escapes.
        if (backslash + 1 >= length) this.escapePending = true;
        index = backslash + 2;
      } else {
        if (quote < length) this.inString = false;
        index = quote + 1;
      }
      this.stringBytes += Math.min(index, length) - from;
      if (this.stringBytes > this.maxStringBytes) {
        this.stringTooLong = true;
        return false;
      }
    }
    return true;
  }
}

function nextIndexOf(bytes: Buffer, byte: number, from: number): number {
  const found = bytes.indexOf(byte, from);
  return found === -1 ? bytes.length : found;
}
