import { Buffer, isUtf8 } from 'node:buffer';

/**
 * Strict streaming UTF-8 decoding. Each chunk is decoded up to its last
 * complete character and the 1-3 bytes of a character split across chunks
 * wait for the next one. Validation and decoding use Buffer's native code,
 * several times faster than a streaming TextDecoder (measured on 64 KiB
 * chunks), which matters for a 25 MiB upload.
 */
export class StrictUtf8Decoder {
  private pending: Uint8Array = new Uint8Array(0);
  private atStart = true;

  /** The text of the complete characters received so far, or null when the bytes are not UTF-8. */
  decode(chunk: Uint8Array): string | null {
    const bytes = this.pending.length === 0 ? chunk : concatenate(this.pending, chunk);
    const complete = lengthOfCompleteCharacters(bytes);
    this.pending = bytes.slice(complete);
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, complete);
    if (!isUtf8(view)) return null;
    return this.withoutByteOrderMark(view.toString('utf8'));
  }

  /** Checks the next chunk without decoding it (the caller decodes elsewhere); false when the bytes are not UTF-8. */
  accept(chunk: Uint8Array): boolean {
    const bytes = this.pending.length === 0 ? chunk : concatenate(this.pending, chunk);
    const complete = lengthOfCompleteCharacters(bytes);
    this.pending = bytes.slice(complete);
    return isUtf8(Buffer.from(bytes.buffer, bytes.byteOffset, complete));
  }

  /** True when the input ended on a complete character. */
  finish(): boolean {
    return this.pending.length === 0;
  }

  private withoutByteOrderMark(text: string): string {
    if (!this.atStart || text === '') return text;
    this.atStart = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

/**
 * Bytes up to the end of the last complete character: the last character
 * starts at the last byte that is not a continuation byte (10xxxxxx), and
 * its first byte says how long it is.
 */
function lengthOfCompleteCharacters(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let back = 1; back <= Math.min(4, length); back++) {
    const byte = bytes[length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return back < needed ? length - back : length;
  }
  // Only continuation bytes at the end: not UTF-8, and validation will say so.
  return length;
}

function concatenate(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first, 0);
  joined.set(second, first.length);
  return joined;
}
