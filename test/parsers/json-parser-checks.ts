/**
 * Shared by the JSON parser tests (zap, nuclei, sslyze): feeding input in
 * arbitrary pieces and the hostile inputs every JSON parser must refuse.
 */
import { expect } from 'chai';
import type { ParseResult, ResultParser } from '../../src/domain/risks/finding.js';
import { MalformedResultError } from '../../src/domain/errors.js';

/** A small seeded generator (mulberry32), so a failing split can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes `bytes` in chunks of 1..maxChunk bytes chosen by a seeded generator. */
export function parseInRandomChunks(parser: ResultParser, bytes: Uint8Array, seed: number, maxChunk = 4096): ParseResult {
  const random = seededRandom(seed);
  for (let offset = 0; offset < bytes.length;) {
    const size = 1 + Math.floor(random() * maxChunk);
    parser.write(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return parser.end();
}

/** Offsets that fall inside a multi-byte UTF-8 character (after its first byte). */
export function offsetsInsideMultiByteCharacters(bytes: Uint8Array, limit = 50): number[] {
  const offsets: number[] = [];
  for (let offset = 1; offset < bytes.length && offsets.length < limit; offset++) {
    if (((bytes[offset] ?? 0) & 0xc0) === 0x80) offsets.push(offset);
  }
  return offsets;
}

/** Writes `bytes` in two pieces split at `offset`. */
export function parseSplitAt(parser: ResultParser, bytes: Uint8Array, offset: number): ParseResult {
  parser.write(bytes.subarray(0, offset));
  parser.write(bytes.subarray(offset));
  return parser.end();
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Runs write + end and returns the MalformedResultError it must throw. */
export function expectMalformed(parser: ResultParser, bytes: Uint8Array, message: RegExp): MalformedResultError {
  let caught: unknown;
  try {
    parser.write(bytes);
    parser.end();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'thrown error').to.be.instanceOf(MalformedResultError);
  expect((caught as Error).message).to.match(message);
  return caught as MalformedResultError;
}

/**
 * The byte cap is enforced by the write that crosses it, so a caller
 * streaming an upload stops reading there instead of buffering the rest.
 */
export function expectRefusedWhileWriting(createParser: (maxBytes: number) => ResultParser): void {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const parser = createParser(1024 * 1024);
  for (let index = 0; index < 16; index++) parser.write(chunk);
  expect(() => parser.write(chunk)).to.throw(MalformedResultError, /larger than the 1 MiB limit/);
  expect(() => parser.write(chunk), 'later writes').to.throw(MalformedResultError, /larger than/);
  expect(() => parser.end(), 'end after the refusal').to.throw(MalformedResultError, /larger than/);
}

/** 100k '[' must be refused as malformed at the nesting cap, not with a RangeError from deep recursion. */
export function expectDeepNestingRefused(parser: ResultParser, opening = '['): void {
  expect(() => {
    parser.write(utf8(opening.repeat(100_000)));
    parser.end();
  }).to.throw(MalformedResultError, /nests JSON arrays or objects more than 64 levels deep/);
}

export const XML_DOCUMENT = utf8('<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap"><host/></nmaprun>\n');

/** Text with a byte that can never occur in UTF-8 (0xFF) in the middle. */
export function withInvalidUtf8(text: string): Uint8Array {
  const bytes = utf8(text);
  const broken = new Uint8Array(bytes.length + 1);
  const middle = Math.floor(bytes.length / 2);
  broken.set(bytes.subarray(0, middle), 0);
  broken[middle] = 0xff;
  broken.set(bytes.subarray(middle), middle + 1);
  return broken;
}
