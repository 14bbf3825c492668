import { expect } from 'chai';
import { formatUuid7, nextUuid7Fields, timeOrderedUuid, type Uuid7Fields } from '../../src/domain/time-ordered-uuid.js';

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('time-ordered ids (UUID version 7)', () => {
  const at = new Date('2026-11-21T10:00:00.123Z');
  const msHex = at
    .getTime()
    .toString(16)
    .padStart(12, '0')
    .replace(/^(.{8})/, '$1-');

  it('is a version 7, RFC 9562 variant UUID that starts with the time in milliseconds', () => {
    expect(formatUuid7(nextUuid7Fields(undefined, at.getTime(), new Uint8Array(10).fill(0xff)))).to.equal(`${msHex}-7fff-bfff-ffffffffffff`);
    expect(formatUuid7(nextUuid7Fields(undefined, at.getTime(), new Uint8Array(10)))).to.equal(`${msHex}-7000-8000-000000000000`);
  });

  it('sorts later ids after earlier ones, as text', () => {
    const ids = [0, 1, 2, 1000, 86_400_000].map((ms) => timeOrderedUuid(new Date(at.getTime() + ms)));
    expect([...ids].sort()).to.deep.equal(ids);
  });

  it('sorts ids made in the same millisecond in the order they were made', () => {
    const ids = Array.from({ length: 1000 }, () => timeOrderedUuid(at));
    expect(new Set(ids).size).to.equal(1000);
    expect([...ids].sort()).to.deep.equal(ids);
    for (const id of ids) expect(id).to.match(UUID7);
  });

  it('sorts an id made after the clock was set back after the ones before it', () => {
    const later = timeOrderedUuid(new Date(at.getTime() + 60_000));
    const setBack = timeOrderedUuid(at);
    expect(setBack > later, `${setBack} after ${later}`).to.equal(true);
  });

  describe('counting on within a millisecond', () => {
    const step = (previous: Uuid7Fields, random: number[]) => nextUuid7Fields(previous, previous.ms, Uint8Array.from([...random, 0, 0, 0, 0, 0, 0, 0]));
    const fields = (randA: number, randBHigh: number, randBLow: number): Uuid7Fields => ({ ms: at.getTime(), randA, randBHigh, randBLow });

    it('adds 1 plus the first three random bytes to the low bits', () => {
      expect(step(fields(5, 6, 7), [0, 0, 0])).to.deep.equal(fields(5, 6, 8));
      expect(step(fields(5, 6, 7), [0xff, 0xff, 0xff])).to.deep.equal(fields(5, 6, 7 + 0x1000000));
    });

    it('carries into the high bits of rand_b, then into rand_a', () => {
      expect(step(fields(5, 6, 0xffffffff), [0, 0, 1])).to.deep.equal(fields(5, 7, 1));
      expect(step(fields(5, 0x3fffffff, 0xffffffff), [0, 0, 0])).to.deep.equal(fields(6, 0, 0));
    });

    it('moves on to the next millisecond when all 74 bits are spent, still sorting after', () => {
      const full = fields(0xfff, 0x3fffffff, 0xffffffff);
      const next = step(full, [0, 0, 0]);
      expect(next.ms).to.equal(at.getTime() + 1);
      expect(formatUuid7(next) > formatUuid7(full)).to.equal(true);
    });

    it('counts on from the previous id when the clock reads an earlier millisecond', () => {
      expect(nextUuid7Fields(fields(1, 2, 3), at.getTime() - 5000, new Uint8Array(10))).to.deep.equal(fields(1, 2, 4));
    });

    it('starts from random bits at a later millisecond', () => {
      const random = Uint8Array.from([0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11, 0x22]);
      const later = new Date(at.getTime() + 1);
      const msText = later.getTime().toString(16).padStart(12, '0');
      expect(formatUuid7(nextUuid7Fields(fields(1, 2, 3), later.getTime(), random))).to.equal(
        `${msText.slice(0, 8)}-${msText.slice(8)}-7234-9678-9abcdef01122`,
      );
    });
  });
});
