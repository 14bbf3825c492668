import { expect } from 'chai';
import { createOpenVasParser, openVasThreatLevel, parseOpenVasPort } from '../../src/parsers/openvas.js';
import { expectMatchesExpected, fixtureFiles, parseWhole, readExpected, readFixture } from './fixture-expectations.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function result(oid: string, threat: string, severity: string, extra = ''): string {
  return (
    `<result id="r-${oid}"><host>10.0.0.5<asset asset_id=""/><hostname>db.example</hostname></host><port>5432/tcp</port>` +
    `<nvt oid="${oid}"><name>NVT ${oid}</name><tags>summary=Short summary.|insight=Why it matters.</tags></nvt>` +
    `<threat>${threat}</threat><severity>${severity}</severity><qod><value>75</value><type>remote_banner</type></qod>` +
    `<description>Detected output</description>${extra}</result>`
  );
}

function report(results: string, root = 'report'): Uint8Array {
  const inner = `<report id="x"><report id="x"><results>${results}</results></report></report>`;
  return encode(root === 'report' ? inner : `<${root} status="200">${inner}</${root}>`);
}

describe('OpenVAS parser', () => {
  describe('real OpenVAS/GVM reports', () => {
    for (const name of fixtureFiles('openvas')) {
      it(`parses ${name} into the expected findings`, () => {
        const parsed = parseWhole(createOpenVasParser(), readFixture('openvas', name));
        expectMatchesExpected(parsed, readExpected('openvas', name));
      });
    }
  });

  it('counts only top-level results, not the results nested in <detection>', () => {
    const detection = `<detection><result id="d"><details><detail><name>product</name><value>cpe:/a:x</value></detail></details></result></detection>`;
    const parsed = parseWhole(createOpenVasParser(), report(result('1.2.3', 'Medium', '5.0', detection)));
    expect(parsed.findings.map((f) => f.fingerprint)).to.deep.equal(['openvas:1.2.3:5432/tcp']);
  });

  it('keeps Log results as INFO and drops false positives', () => {
    const results = result('1.1', 'Log', '0.0') + result('1.2', 'False Positive', '-1.0') + result('1.3', 'High', '7.5');
    const parsed = parseWhole(createOpenVasParser(), report(results));
    expect(parsed.findings.map((f) => [f.fingerprint, f.definition.threat_level])).to.deep.equal([
      ['openvas:1.1:5432/tcp', 'INFO'],
      ['openvas:1.3:5432/tcp', 'HIGH'],
    ]);
  });

  it('reads the QoD as a number and the host name beside the address', () => {
    const parsed = parseWhole(createOpenVasParser(), report(result('1.4', 'Medium', '5.0')));
    expect(parsed.findings[0]?.definition.additional_info).to.include({ qod: 75, qod_type: 'remote_banner', hostname: 'db.example' });
    expect(parsed.hosts).to.deep.equal([{ address: '10.0.0.5', hostname: 'db.example' }]);
  });

  it('writes the description as plain text sections from the NVT tags and the detection result', () => {
    const parsed = parseWhole(createOpenVasParser(), report(result('1.5', 'Medium', '5.0')));
    expect(parsed.findings[0]?.definition.description).to.equal('Short summary.\n\nDetection result:\nDetected output\n\nInsight:\nWhy it matters.');
  });

  it('accepts the <get_reports_response> wrapper that gvm-cli prints', () => {
    const parsed = parseWhole(createOpenVasParser(), report(result('1.6', 'Low', '2.0'), 'get_reports_response'));
    expect(parsed.findings).to.have.length(1);
  });

  it('ranks by severity on the CVSS scale and falls back to the threat word', () => {
    expect(openVasThreatLevel('9.8', 'High')).to.equal('CRITICAL');
    expect(openVasThreatLevel('4.0', '')).to.equal('MEDIUM');
    expect(openVasThreatLevel('', 'Medium')).to.equal('MEDIUM');
    expect(openVasThreatLevel('', 'Log')).to.equal('INFO');
    expect(openVasThreatLevel('-1', '')).to.equal(undefined);
    expect(openVasThreatLevel('', 'Debug')).to.equal(undefined);
  });

  it('reads old and new port strings into the same fingerprint part', () => {
    expect(parseOpenVasPort('microsoft-ds (445/tcp)')).to.deep.equal({ key: '445/tcp', port: 445, protocol: 'tcp' });
    expect(parseOpenVasPort('445/tcp')).to.deep.equal({ key: '445/tcp', port: 445, protocol: 'tcp' });
    expect(parseOpenVasPort('general/udp')).to.deep.equal({ key: 'general/udp', protocol: 'udp' });
    expect(parseOpenVasPort('general/CPE-T')).to.deep.equal({ key: 'general/CPE-T' });
  });
});
