import { expect } from 'chai';
import { createNessusParser } from '../../src/parsers/nessus.js';
import { expectMatchesExpected, fixtureFiles, parseWhole, readExpected, readFixture } from './fixture-expectations.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function nessus(items: string, properties = '<tag name="host-ip">10.0.0.9</tag><tag name="netbios-name">FILESRV</tag>'): Uint8Array {
  return encode(
    `<?xml version="1.0" ?><NessusClientData_v2><Report name="r" xmlns:cm="http://www.nessus.org/cm">` +
      `<ReportHost name="filesrv"><HostProperties>${properties}</HostProperties>${items}</ReportHost></Report></NessusClientData_v2>`,
  );
}

function item(pluginId: string, severity: string, children = '', port = '445'): string {
  return `<ReportItem port="${port}" svc_name="cifs" protocol="tcp" severity="${severity}" pluginID="${pluginId}" pluginName="Plugin ${pluginId}" pluginFamily="Windows">${children}</ReportItem>`;
}

describe('Nessus parser', () => {
  describe('real Nessus files', () => {
    for (const name of fixtureFiles('nessus')) {
      it(`parses ${name} into the expected findings`, () => {
        const parsed = parseWhole(createNessusParser(), readFixture('nessus', name));
        expectMatchesExpected(parsed, readExpected('nessus', name));
      });
    }
  });

  it('ranks by the CVSS v3 base score when there is one, else by the severity attribute', () => {
    const items =
      item('1', '1', '<cvss3_base_score>9.1</cvss3_base_score><cvss_base_score>5.0</cvss_base_score>') +
      item('2', '3', '<cvss_base_score>7.5</cvss_base_score>');
    const parsed = parseWhole(createNessusParser(), nessus(items));
    expect(parsed.findings.map((f) => [f.fingerprint, f.definition.threat_level, f.definition.cvss])).to.deep.equal([
      ['nessus:1:tcp/445', 'CRITICAL', '9.1'],
      ['nessus:2:tcp/445', 'HIGH', '7.5'],
    ]);
  });

  it('keeps compliance checks of one plugin apart by their check id', () => {
    const check = (id: string): string =>
      item('21157', '3', `<cm:compliance-check-name>Check ${id}</cm:compliance-check-name><cm:compliance-check-id>${id}</cm:compliance-check-id>`, '0');
    const parsed = parseWhole(createNessusParser(), nessus(check('aa') + check('bb')));
    expect(parsed.findings.map((f) => [f.fingerprint, f.definition.title])).to.deep.equal([
      ['nessus:21157:tcp/0:aa', 'Check aa'],
      ['nessus:21157:tcp/0:bb', 'Check bb'],
    ]);
  });

  it('truncates plugin output to 8 KiB and says so', () => {
    const parsed = parseWhole(createNessusParser(), nessus(item('3', '0', `<plugin_output>${'x'.repeat(20000)}</plugin_output>`)));
    const output = parsed.findings[0]?.definition.additional_info.plugin_output as string;
    expect(output.startsWith('x'.repeat(8192))).to.equal(true);
    expect(output).to.match(/\[truncated: 11808 more characters\]$/);
  });

  it('takes the NetBIOS name as host name when there is no FQDN, and leaves port 0 out of the location', () => {
    const parsed = parseWhole(createNessusParser(), nessus(item('4', '0', '', '0')));
    expect(parsed.hosts).to.deep.equal([{ address: '10.0.0.9', hostname: 'FILESRV' }]);
    expect(parsed.findings[0]?.location).to.deep.equal({ host: '10.0.0.9', protocol: 'tcp' });
  });
});
