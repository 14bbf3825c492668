import { expect } from 'chai';
import { presentRisk } from '../../src/api/present/risk.js';
import { riskJsonAround } from '../../src/app/risk-history.js';
import { newSerializedEvent } from '../../src/domain/events/event.js';
import type { RiskView } from '../../src/domain/risks/risk.js';

const view: RiskView = {
  id: 'r-1',
  accountId: 'a-1',
  targetId: 't-1',
  scanType: 'NMAP',
  fingerprint: 'nmap:tcp/443',
  status: 'OPEN',
  firstDetectedAt: '2026-11-25T00:00:00.000Z',
  lastDetectedAt: '2026-11-25T00:00:00.000Z',
  isAccepted: false,
  acceptedBy: [{ note: 'ok "quoted" \\ é 😀', created_at: '2026-11-25T00:00:00.000Z', last_updated_at: '2026-11-25T00:00:00.000Z' }],
  definition: {
    scan_type: 'NMAP',
    title: 'Open port 443 <b>',
    threat_level: 'INFO',
    description: 'line\nline "2" \u2028',
    solution: '',
    cvss: '',
    additional_info: { port: 443, nested: { list: [1, null, 'x'] }, truncated: false },
  },
  createdAt: '2026-11-25T00:00:00.000Z',
  target: '45.0.0.1',
  targetLabel: 'edge',
  tags: ['prod', 'dmz'],
};

describe('risk event data as JSON', () => {
  it('built around the JSON of the definition is JSON.stringify of the presented Risk, byte for byte', () => {
    const presented = presentRisk(view);
    expect(riskJsonAround(presented, JSON.stringify(view.definition))).to.equal(JSON.stringify(presented));
    const withoutLabel = presentRisk({ ...view, targetLabel: undefined as unknown as string, tags: [] });
    expect(riskJsonAround(withoutLabel, JSON.stringify(view.definition))).to.equal(JSON.stringify(withoutLabel));
  });

  it('an event made from JSON gives its data back as the object it was made from', () => {
    const presented = presentRisk(view);
    const event = newSerializedEvent('a-1', 'risk.created', JSON.stringify(presented), new Date('2026-11-25T00:00:00.000Z'));
    expect(event.data).to.deep.equal(JSON.parse(JSON.stringify(presented)));
    expect(event.dataJson).to.equal(JSON.stringify(presented));
    expect(event.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });
});
