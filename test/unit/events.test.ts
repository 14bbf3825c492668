import { expect } from 'chai';
import { eventBody, newEvent, serializedEventBody } from '../../src/domain/events/event.js';

describe('events as SPEC.md Event objects', () => {
  it('carry id, event_created_at, the deprecated created_at in milliseconds, type and data', () => {
    const at = new Date('2026-03-04T05:06:07.890Z');
    const event = newEvent('account-1', 'scan.updated', { id: 'scan-1', state: 'RUNNING' }, at);
    expect(eventBody(event)).to.deep.equal({
      id: event.id,
      event_created_at: '2026-03-04T05:06:07.890Z',
      created_at: 1772600767890,
      type: 'scan.updated',
      data: { id: 'scan-1', state: 'RUNNING' },
    });
  });

  it('get a fresh unique id each', () => {
    const at = new Date();
    const ids = new Set(Array.from({ length: 1000 }, () => newEvent('a', 'scan.created', {}, at).id));
    expect(ids.size).to.equal(1000);
  });

  it('serialize from stored JSON data to the very bytes JSON.stringify gives for the whole object', () => {
    const at = new Date('2026-03-04T05:06:07.890Z');
    for (const data of [{}, { id: 'scan-1', tags: ['a', 'b'], progress: 12.5, finished_at: null }, { name: 'quote " backslash \\ newline \n é 𝄞 \u2028' }]) {
      const event = newEvent('account-1', 'risk.updated', data, at);
      expect(serializedEventBody(event, JSON.stringify(data))).to.equal(JSON.stringify(eventBody(event)));
    }
  });
});
