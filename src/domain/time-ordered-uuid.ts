/**
 * Ids of events, risks and targets are UUIDs of version 7 (RFC 9562): the
 * time in milliseconds first, then 74 bits that start random and count up.
 * Ids made later sort later, also within a millisecond (RFC 9562's
 * "monotonic random", method 2), so every index keyed by one of these ids
 * grows at one end instead of taking new keys all over the tree, where
 * each insert split a page and each commit rewrote the pages it touched.
 * The outbox's and the deliveries' indexes were the first reason; the
 * indexes of a target's risks the next: with random target ids an upload of
 * 45,158 findings on 620 new targets wrote 40,400-40,700 WAL frames for a
 * database of 26,500 pages, with these 34,400-34,800 (bench/ingest.ts,
 * ingest-wal). Still a UUID, still unique: SPEC.md asks only for a unique id.
 */
import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn 4 KiB at a time from the CSPRNG and handed out 10 at a
 * time, as Node's randomUUID() caches its entropy: one randomBytes(10) call
 * per event cost ~4 microseconds, 0.17 s of a 45,000-event upload
 * (bench/ingest.ts). Each byte is handed out once.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function tenRandomBytes(): Uint8Array {
  if (poolOffset + 10 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

/**
 * A version 7 UUID's fields: the milliseconds (48 bits), then its 74 other
 * bits as `randA` (12 bits), `randBHigh` (30 bits) and `randBLow` (32 bits),
 * each a plain number so that counting up needs no BigInt.
 */
export interface Uuid7Fields {
  ms: number;
  randA: number;
  randBHigh: number;
  randBLow: number;
}

const RAND_A_MAX = 0xfff;
const RAND_B_HIGH_MAX = 0x3fffffff;
const RAND_B_LOW_SPAN = 0x1_0000_0000;

/**
 * The fields of the id that follows `previous` for something made at `ms`,
 * from 10 random bytes. A later millisecond starts from random bits. The
 * same one, or an earlier one (a clock set back), counts on from the
 * previous id by 1 to 2^24 (a random step: the next id is not the last
 * plus one); should all 74 bits run out, the count moves on to the
 * next millisecond. Pure: timeOrderedUuid() keeps the process's previous id.
 */
export function nextUuid7Fields(previous: Uuid7Fields | undefined, ms: number, random: Uint8Array): Uuid7Fields {
  const at = Math.max(0, Math.trunc(ms));
  if (previous === undefined || at > previous.ms) return { ms: at, ...randomBits(random) };
  let { randA, randBHigh, randBLow } = previous;
  randBLow += 1 + ((random[0]! << 16) | (random[1]! << 8) | random[2]!);
  if (randBLow >= RAND_B_LOW_SPAN) {
    randBLow -= RAND_B_LOW_SPAN;
    randBHigh += 1;
    if (randBHigh > RAND_B_HIGH_MAX) {
      randBHigh = 0;
      randA += 1;
      if (randA > RAND_A_MAX) return { ms: previous.ms + 1, ...randomBits(random) };
    }
  }
  return { ms: previous.ms, randA, randBHigh, randBLow };
}

/** A fresh millisecond's 74 bits from 10 random bytes. */
function randomBits(random: Uint8Array): Omit<Uuid7Fields, 'ms'> {
  const bytes = Buffer.from(random.buffer, random.byteOffset, 10);
  return { randA: bytes.readUInt16BE(0) & RAND_A_MAX, randBHigh: bytes.readUInt32BE(2) & RAND_B_HIGH_MAX, randBLow: bytes.readUInt32BE(6) };
}

/** The UUID text of these fields: version 7, RFC 9562 variant. */
export function formatUuid7(fields: Uuid7Fields): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(fields.ms, 0, 6);
  bytes.writeUInt16BE(0x7000 | fields.randA, 6);
  bytes.writeUInt32BE((0x80000000 | fields.randBHigh) >>> 0, 8);
  bytes.writeUInt32BE(fields.randBLow, 12);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The process's last id: each new one sorts after it (another process's ids are unique by their own random bits). */
let last: Uuid7Fields | undefined;

/** A version 7 UUID for something made at `at`, sorting after every id this process made before it. */
export function timeOrderedUuid(at: Date): string {
  last = nextUuid7Fields(last, at.getTime(), tenRandomBytes());
  return formatUuid7(last);
}
