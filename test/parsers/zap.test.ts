import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MalformedResultError } from '../../src/domain/errors.js';
import { createZapParser } from '../../src/parsers/zap.js';
import { expectMatchesExpected, fixtureFiles, parseWhole, readExpected, readFixture } from './fixture-expectations.js';
import {
  expectDeepNestingRefused,
  expectMalformed,
  expectRefusedWhileWriting,
  offsetsInsideMultiByteCharacters,
  parseInRandomChunks,
  parseSplitAt,
  utf8,
  withInvalidUtf8,
  XML_DOCUMENT,
} from './json-parser-checks.js';

const zap = () => createZapParser('OWASP_ZAP');

function reportWith(alert: Record<string, unknown>, site: Record<string, unknown> = {}): Uint8Array {
  const fullSite = { '@name': 'https://shop.example', '@host': 'shop.example', '@port': '443', '@ssl': 'true', alerts: [alert], ...site };
  return utf8(JSON.stringify({ '@version': '2.14.0', site: [fullSite] }));
}

const BASE_ALERT = {
  pluginid: '10020',
  alertRef: '10020-1',
  alert: 'Missing Anti-clickjacking Header',
  riskcode: '2',
  confidence: '2',
  desc: '<p>The response does not protect against clickjacking.</p>',
  solution: '<p>Set X-Frame-Options.</p>',
  reference: '<p>https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Frame-Options</p>',
  cweid: '1021',
  wascid: '15',
  count: '1',
  instances: [{ uri: 'https://shop.example/', method: 'GET', param: 'x-frame-options', attack: '', evidence: '' }],
};

describe('ZAP Traditional JSON parser', () => {
  describe('on real ZAP reports', () => {
    for (const name of fixtureFiles('zap')) {
      it(`finds the expected risks in ${name}`, () => {
        expectMatchesExpected(parseWhole(zap(), readFixture('zap', name)), readExpected('zap', name));
      });

      it(`gives the same result for ${name} written in random chunks`, () => {
        const bytes = readFixture('zap', name);
        const whole = parseWhole(zap(), bytes);
        const maxChunk = Math.max(64, Math.ceil(bytes.length / 500));
        for (const seed of [1, 2]) expect(parseInRandomChunks(zap(), bytes, seed, maxChunk)).to.deep.equal(whole);
        for (const offset of offsetsInsideMultiByteCharacters(bytes, 8)) expect(parseSplitAt(zap(), bytes, offset)).to.deep.equal(whole);
      });
    }
  });

  it('maps riskcode 3, 2, 1, 0 to HIGH, MEDIUM, LOW, INFO', () => {
    const levels = ['3', '2', '1', '0'].map((riskcode) => parseWhole(zap(), reportWith({ ...BASE_ALERT, riskcode })).findings[0]?.definition.threat_level);
    expect(levels).to.deep.equal(['HIGH', 'MEDIUM', 'LOW', 'INFO']);
  });

  it('builds the fingerprint from plugin id, alert name and site, and the location from the site', () => {
    const [finding] = parseWhole(createZapParser('OWASP_ZAP_ACTIVE'), reportWith(BASE_ALERT)).findings;
    expect(finding?.fingerprint).to.equal('zap:10020:missing-anti-clickjacking-header@https://shop.example');
    expect(finding?.location).to.deep.equal({ host: 'shop.example', port: 443, protocol: 'tcp', url: 'https://shop.example' });
    expect(finding?.definition.scan_type).to.equal('OWASP_ZAP_ACTIVE');
    expect(finding?.definition.additional_info).to.include({ plugin_id: '10020', alert_ref: '10020-1', cwe_id: 1021, wasc_id: 15 });
  });

  it('keeps an alert on the http and the https site of one host apart', () => {
    const report = {
      site: [
        { '@name': 'http://shop.example', '@host': 'shop.example', '@port': '80', alerts: [BASE_ALERT] },
        { '@name': 'https://shop.example', '@host': 'shop.example', '@port': '443', alerts: [BASE_ALERT] },
      ],
    };
    const findings = parseWhole(zap(), utf8(JSON.stringify(report))).findings;
    expect(findings.map((finding) => finding.location.port)).to.deep.equal([80, 443]);
  });

  it('gives no URL for a site that is not http or https', () => {
    const [finding] = parseWhole(zap(), reportWith(BASE_ALERT, { '@name': 'javascript:alert(1)', '@host': 'shop.example' })).findings;
    expect(finding?.location).to.deep.equal({ host: 'shop.example', port: 443, protocol: 'tcp' });
  });

  it('caps the instance list and keeps the total count', () => {
    const instances = Array.from({ length: 80 }, (_, index) => ({ uri: `https://shop.example/${index}`, method: 'GET', evidence: 'x'.repeat(2000) }));
    const info = parseWhole(zap(), reportWith({ ...BASE_ALERT, count: '80', instances })).findings[0]?.definition.additional_info;
    expect(info?.['instances']).to.have.length(50);
    expect(info?.['instance_count']).to.equal(80);
    expect((info?.['instances'] as Array<{ evidence: string }>)[0]?.evidence.length).to.be.at.most(500);
  });

  it('turns hostile HTML in descriptions into text without tags', () => {
    const hostile = {
      ...BASE_ALERT,
      alert: 'XSS <script>alert(0)</script>',
      desc: '<p>Intro</p><script>alert(1)</script><img src=x onerror=alert(2)><p>&lt;script&gt;alert(3)&lt;/script&gt;</p>',
      solution: '<p>Fix<iframe src="javascript:alert(4)"></iframe></p><p>Now</p>',
      otherinfo: '<svg onload=alert(5)>evidence',
    };
    const { definition } = parseWhole(zap(), reportWith(hostile)).findings[0]!;
    const texts = [definition.title, definition.description, definition.solution, String(definition.additional_info['other_info'])];
    for (const text of texts) expect(text).not.to.match(/<[a-zA-Z/!?]/);
    expect(definition.description).to.equal('Intro\n< script>alert(3)< /script>');
    expect(definition.solution).to.equal('Fix\nNow');
  });

  it('merges an alert listed twice on one site with the higher risk and all instances', () => {
    const report = reportWith(BASE_ALERT, {
      alerts: [
        { ...BASE_ALERT, riskcode: '0', count: '3' },
        { ...BASE_ALERT, riskcode: '2', count: '6' },
      ],
    });
    const findings = parseWhole(zap(), report).findings;
    expect(findings).to.have.length(1);
    expect(findings[0]?.definition.threat_level).to.equal('MEDIUM');
    expect(findings[0]?.definition.additional_info['instance_count']).to.equal(9);
  });

  describe('refuses files that are not a ZAP JSON report', () => {
    it('an empty file', () => {
      expectMalformed(zap(), new Uint8Array(0), /^The file is empty; expected a ZAP Traditional JSON report\.$/);
    });

    it('truncated JSON', () => {
      const bytes = readFixture('zap', 'securecodebox-zap-example.com.json');
      expectMalformed(zap(), bytes.subarray(0, bytes.length / 2), /not valid JSON \(expected a ZAP Traditional JSON report\)/);
    });

    it('bytes that are not UTF-8', () => {
      expectMalformed(zap(), withInvalidUtf8(JSON.stringify({ site: [] })), /not UTF-8 text/);
    });

    it('an XML file', () => {
      expectMalformed(zap(), XML_DOCUMENT, /looks like XML/);
    });

    it('a nuclei result', () => {
      const nucleiLine = readFixture('nuclei', 'securecodebox-nuclei-log4shell.jsonl');
      expectMalformed(
        zap(),
        nucleiLine,
        /^Expected an object with a 'site' array \(ZAP Traditional JSON report\); 'site' is missing \(the object has template-id, info/,
      );
    });

    it("an object whose 'site' is a string", () => {
      expectMalformed(zap(), utf8('{"site": "x"}'), /'site' is a string, not an array/);
    });

    it('an empty array', () => {
      expectMalformed(zap(), utf8('[]'), /^Expected an object with a 'site' array \(ZAP Traditional JSON report\); got an empty array\.$/);
    });

    it('a riskcode outside 0..3', () => {
      expectMalformed(zap(), reportWith({ ...BASE_ALERT, riskcode: '7' }), /'site\[0\]\.alerts\[0\]\.riskcode'/);
    });

    it('a file over the byte cap, while it is written', () => {
      expectRefusedWhileWriting((maxBytes) => createZapParser('OWASP_ZAP', { maxBytes }));
    });

    it('100k nested arrays', () => {
      expectDeepNestingRefused(zap());
    });

    it('100k nested objects', () => {
      expectDeepNestingRefused(zap(), '{"a":');
    });

    it('a string over 8 MiB, at the write that passes the cap', () => {
      const parser = zap();
      parser.write(utf8('{"site":[{"@name":"https://shop.example","alerts":[{"pluginid":"1","riskcode":"1","desc":"'));
      const mebibyte = new Uint8Array(1024 * 1024).fill(0x61);
      for (let index = 0; index < 8; index++) parser.write(mebibyte);
      expect(() => parser.write(mebibyte)).to.throw(
        MalformedResultError,
        /^The file holds a string longer than 8 MiB; no ZAP Traditional JSON report does that\.$/,
      );
      expect(() => parser.end(), 'end after the refusal').to.throw(MalformedResultError, /string longer than 8 MiB/);
    });

    it('one alert over 16 MiB, at the write that passes the cap, naming the alert', () => {
      const parser = zap();
      parser.write(utf8('{"site":[{"@name":"https://shop.example","alerts":[{"pluginid":"1","riskcode":"1","desc":"'));
      const mebibyte = new Uint8Array(1024 * 1024).fill(0x61);
      // Three strings under the 8 MiB string cap: 7 + 7 + 1 MiB and the alert's keys are still under 16 MiB.
      for (let index = 0; index < 7; index++) parser.write(mebibyte);
      parser.write(utf8('","otherinfo":"'));
      for (let index = 0; index < 7; index++) parser.write(mebibyte);
      parser.write(utf8('","solution":"'));
      parser.write(mebibyte);
      expect(() => parser.write(mebibyte)).to.throw(
        MalformedResultError,
        /^The file holds a single value larger than 16 MiB \(at 'site\[0\]\.alerts\[0\]'\); no ZAP Traditional JSON report holds one that large\.$/,
      );
    });

    it('a missing site name after valid alerts, naming the site as checking the whole document did', () => {
      const bytes = utf8(JSON.stringify({ site: [{ '@name': 'https://a.example', alerts: [BASE_ALERT] }, { alerts: [BASE_ALERT] }] }));
      expectMalformed(
        zap(),
        bytes,
        /^Expected an object with a 'site' array \(ZAP Traditional JSON report\); 'site\[1\]\.@name' is missing \(the object has alerts\)\.$/,
      );
    });

    it('a bad site name before a bad alert: the site is named first, as before', () => {
      const bytes = utf8(JSON.stringify({ site: [{ alerts: [{ ...BASE_ALERT, riskcode: '9' }], '@name': '' }] }));
      expectMalformed(zap(), bytes, /'site\[0\]\.@name'/);
    });

    it('a bad alert after alerts already read and dropped, named by its index in the file', () => {
      const bytes = utf8(
        JSON.stringify({
          site: [
            { '@name': 'https://a.example', alerts: [BASE_ALERT, BASE_ALERT] },
            { '@name': 'https://b.example', alerts: [BASE_ALERT, BASE_ALERT, { ...BASE_ALERT, riskcode: '9' }] },
          ],
        }),
      );
      expectMalformed(zap(), bytes, /'site\[1\]\.alerts\[2\]\.riskcode' must be 0 to 3\.$/);
    });

    it('a shape error followed by broken JSON: the syntax error wins, as with JSON.parse', () => {
      const bytes = utf8(`${JSON.stringify({ site: [{ alerts: [] }] }).slice(0, -1)},`);
      expectMalformed(zap(), bytes, /not valid JSON/);
    });
  });

  describe('streams', () => {
    it('gives the same finding when the alerts come before the site name', () => {
      const headerFirst = parseWhole(zap(), reportWith(BASE_ALERT)).findings;
      const alertsFirst = utf8(JSON.stringify({ site: [{ alerts: [BASE_ALERT], '@name': 'https://shop.example', '@host': 'shop.example', '@port': '443' }] }));
      expect(parseWhole(zap(), alertsFirst).findings).to.deep.equal(headerFirst);
    });

    const child = fileURLToPath(new URL('./zap-large-report-child.ts', import.meta.url));
    const runChild = (mebibytes: number, kind: string, heapMb: number) => {
      const run = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--expose-gc', '--import', 'tsx', child, String(mebibytes), kind], {
        encoding: 'utf8',
        maxBuffer: 1024 * 1024,
      });
      expect(run.status, run.stderr).to.equal(0);
      return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { findings?: number; error?: string; written: number; maxRssMb?: number };
    };

    it('parses a 256 MiB report in a 64 MiB V8 heap (the in-cluster result file limit; JSON.parse of it would need over 256 MiB)', function () {
      this.timeout(300_000);
      const result = runChild(256, 'same-site', 64);
      expect(result.error).to.equal(undefined);
      expect(result.written).to.be.greaterThan(255 * 1024 * 1024);
      // The whole process, tsx included, peaks below the file's size (the JSON.parse parser peaked at 1.1 GB and ran out of this heap).
      expect(result.maxRssMb).to.be.lessThan(256);
      // Every site has the same name: the alerts merge into one finding per plugin and alert name.
      expect(result.findings).to.equal(7);
    });

    it('holds only the kept part of a long evidence string while it reads, not the whole string', function () {
      this.timeout(120_000);
      const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./zap-long-evidence-child.ts', import.meta.url))], {
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).to.equal(0);
      const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { findings: number; evidenceChars: number[]; holdingMb: number; afterMb: number };
      expect(result.findings).to.equal(12);
      expect(result.evidenceChars.every((length) => length === 500)).to.equal(true);
      // 12 findings of 500 evidence characters each: a cut that pointed into its 2 MiB source kept 24 MiB alive until the end.
      expect(result.holdingMb).to.be.lessThan(8);
      expect(result.afterMb).to.be.lessThan(8);
    });

    it('refuses a report with more than 50,000 findings at the site that passes the cap, not at the end', function () {
      this.timeout(300_000);
      const result = runChild(64, 'distinct-sites', 128);
      expect(result.error).to.match(/^the file holds more than 50,000 findings/);
      // 3 findings per site: refused while writing site 16,667, long before the 64 MiB are written.
      expect(result.written).to.be.lessThan(64 * 1024 * 1024 * 0.9);
    });
  });
});
