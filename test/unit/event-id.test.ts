import { expect } from 'chai';
import { timeOrderedUuid } from '../../src/domain/events/event-id.js';

describe('event ids (UUID version 7)', () => {
  const at = new Date('2026-11-21T10:00:00.123Z');

  it('is a version 7, RFC 9562 variant UUID that starts with the time in milliseconds', () => {
    const id = timeOrderedUuid(at, new Uint8Array(10).fill(0xff));
    expect(id).to.equal(
      `${at
        .getTime()
        .toString(16)
        .padStart(12, '0')
        .replace(/^(.{8})/, '$1-')}-7fff-bfff-ffffffffffff`,
    );
    expect(timeOrderedUuid(at, new Uint8Array(10))).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-000000000000$/);
  });

  it('sorts later ids after earlier ones, as text', () => {
    const ids = [0, 1, 2, 1000, 86_400_000].map((ms) => timeOrderedUuid(new Date(at.getTime() + ms)));
    expect([...ids].sort()).to.deep.equal(ids);
  });

  it('differs for ids made in the same millisecond', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => timeOrderedUuid(at)));
    expect(ids.size).to.equal(1000);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
