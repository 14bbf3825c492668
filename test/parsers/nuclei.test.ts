import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createNucleiParser } from '../../src/parsers/nuclei.js';
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

const nuclei = () => createNucleiParser();

function lines(...records: object[]): Uint8Array {
  return utf8(records.map((record) => JSON.stringify(record)).join('\n'));
}

const V3_RECORD = {
  'template-id': 'git-config',
  info: {
    name: 'Git Configuration - Detect',
    severity: 'medium',
    description: 'Git configuration was detected.',
    remediation: 'Deny access to /.git.',
    reference: ['https://example.org/git'],
    classification: { 'cve-id': null, 'cwe-id': ['cwe-200'], 'cvss-score': 5.3, 'cvss-metrics': 'CVSS:3.1/AV:N' },
  },
  type: 'http',
  host: 'https://shop.example',
  'matched-at': 'https://shop.example/.git/config?cachebuster=123',
  ip: '203.0.113.7',
  'extracted-results': ['[core]'],
  request: 'GET /.git/config HTTP/1.1',
  response: 'HTTP/1.1 200 OK',
  'curl-command': 'curl https://shop.example/.git/config',
};

describe('nuclei parser', () => {
  describe('on real nuclei output', () => {
    for (const name of fixtureFiles('nuclei')) {
      it(`finds the expected risks in ${name}`, () => {
        expectMatchesExpected(parseWhole(nuclei(), readFixture('nuclei', name)), readExpected('nuclei', name));
      });

      it(`gives the same result for ${name} written in random chunks`, () => {
        const bytes = readFixture('nuclei', name);
        const whole = parseWhole(nuclei(), bytes);
        for (const seed of [1, 2, 3]) expect(parseInRandomChunks(nuclei(), bytes, seed, 512)).to.deep.equal(whole);
        for (const offset of offsetsInsideMultiByteCharacters(bytes, 8)) expect(parseSplitAt(nuclei(), bytes, offset)).to.deep.equal(whole);
      });
    }
  });

  it('maps critical, high, medium, low, info and unknown severities', () => {
    const levels = ['critical', 'high', 'medium', 'low', 'info', 'unknown', 'made-up', 'constructor'].map((severity, index) => {
      const record = { ...V3_RECORD, 'template-id': `t${index}`, info: { name: 'x', severity } };
      return parseWhole(nuclei(), lines(record)).findings[0]?.definition.threat_level;
    });
    expect(levels).to.deep.equal(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO', 'INFO', 'INFO', 'INFO']);
  });

  it('reads a v3 record: cvss from the classification, location from host, no request or response kept', () => {
    const [finding] = parseWhole(nuclei(), lines(V3_RECORD)).findings;
    expect(finding?.fingerprint).to.equal('nuclei:git-config::https://shop.example/.git/config');
    expect(finding?.location).to.deep.equal({ host: 'shop.example', port: 443, protocol: 'tcp', url: 'https://shop.example' });
    expect(finding?.definition).to.include({ title: 'Git Configuration - Detect', cvss: '5.3', solution: 'Deny access to /.git.' });
    expect(finding?.definition.additional_info).to.deep.include({ cwe: ['CWE-200'], references: ['https://example.org/git'] });
    expect(JSON.stringify(finding)).not.to.match(/HTTP\/1\.1|curl /);
  });

  it('gives the same fingerprint to the same v2 and v3 record', () => {
    const v2 = { templateID: 'git-config', info: V3_RECORD.info, host: V3_RECORD.host, matched: V3_RECORD['matched-at'] };
    const [fromV2] = parseWhole(nuclei(), lines(v2)).findings;
    const [fromV3] = parseWhole(nuclei(), lines(V3_RECORD)).findings;
    expect(fromV2?.fingerprint).to.equal(fromV3?.fingerprint);
  });

  it('keeps two matches of one template on one host apart by path, and merges repeats', () => {
    const other = { ...V3_RECORD, 'matched-at': 'https://shop.example/app/.git/config' };
    const repeat = { ...V3_RECORD, 'extracted-results': ['[remote]'] };
    const findings = parseWhole(nuclei(), lines(V3_RECORD, other, repeat)).findings;
    expect(findings).to.have.length(2);
    expect(findings[0]?.definition.additional_info['extracted_results']).to.deep.equal(['[core]', '[remote]']);
  });

  it('reads blank lines, CRLF line ends and a last line without newline', () => {
    const text = `\n${JSON.stringify(V3_RECORD)}\r\n\r\n   \n${JSON.stringify({ ...V3_RECORD, 'template-id': 'other' })}`;
    expect(parseWhole(nuclei(), utf8(text)).findings).to.have.length(2);
  });

  it('finds nothing in an empty or blank file', () => {
    expect(parseWhole(nuclei(), new Uint8Array(0))).to.deep.equal({ findings: [], hosts: [] });
    expect(parseWhole(nuclei(), utf8('\n \n'))).to.deep.equal({ findings: [], hosts: [] });
  });

  it('reads host:port, bare IPv6 and bracketed IPv6 hosts', () => {
    const hosts = ['db.example:3306', '[2001:db8::1]:8443', '2001:db8::2'].map((host, index) => {
      const record = { 'template-id': `t${index}`, info: { name: 'x', severity: 'low' }, type: 'network', host };
      return parseWhole(nuclei(), lines(record)).findings[0]?.location;
    });
    expect(hosts).to.deep.equal([
      { host: 'db.example', port: 3306, protocol: 'tcp' },
      { host: '2001:db8::1', port: 8443, protocol: 'tcp' },
      { host: '2001:db8::2' },
    ]);
  });

  describe('refuses files that are not nuclei output', () => {
    it('a truncated line', () => {
      expectMalformed(nuclei(), utf8(`${JSON.stringify(V3_RECORD)}\n{"template-id": "x", "info`), /^Line 2 is not valid JSON: /);
    });

    it('bytes that are not UTF-8', () => {
      expectMalformed(nuclei(), withInvalidUtf8(JSON.stringify(V3_RECORD)), /not UTF-8 text/);
    });

    it('an XML file', () => {
      expectMalformed(nuclei(), XML_DOCUMENT, /^Line 1 is not valid JSON: it looks like XML/);
    });

    it('a ZAP report', () => {
      expectMalformed(
        nuclei(),
        readFixture('zap', 'secobserve-zap-owasp_zap.json'),
        /^At line 1: expected a nuclei result object \(nuclei JSON Lines file\); it has no 'template-id'/,
      );
    });

    it('a line that is not an object', () => {
      expectMalformed(nuclei(), utf8(`${JSON.stringify(V3_RECORD)}\n"text"`), /^At line 2: expected a nuclei result object .*; got a string\.$/);
    });

    it('an array element that is not an object', () => {
      expectMalformed(nuclei(), utf8(`[${JSON.stringify(V3_RECORD)}, 42]`), /^At item 2: .*got a number\.$/);
    });

    it('a file over the byte cap, while it is written', () => {
      expectRefusedWhileWriting((maxBytes) => createNucleiParser({ maxBytes }));
    });

    it('100k nested arrays or objects', () => {
      expectDeepNestingRefused(nuclei());
      expectDeepNestingRefused(nuclei(), '{"a":');
    });

    it('a bad line early and a file over the byte cap later: the cap is what is refused, as when the file was read whole', () => {
      const parser = createNucleiParser({ maxBytes: 1024 });
      parser.write(utf8(`${JSON.stringify(V3_RECORD)}\n{"broken\n`));
      expect(() => parser.write(new Uint8Array(1024).fill(0x20))).to.throw(/larger than the 1024 bytes limit/);
    });
  });

  describe('streams', () => {
    it('reads a first line that is not JSON by itself as the start of one pretty-printed record, as before', () => {
      const pretty = utf8(JSON.stringify(V3_RECORD, null, 2));
      expect(parseWhole(nuclei(), pretty).findings).to.deep.equal(parseWhole(nuclei(), lines(V3_RECORD)).findings);
    });

    const child = fileURLToPath(new URL('./nuclei-large-output-child.ts', import.meta.url));
    const runChild = (mebibytes: number, kind: string, heapMb: number) => {
      const run = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--expose-gc', '--import', 'tsx', child, String(mebibytes), kind], {
        encoding: 'utf8',
        maxBuffer: 1024 * 1024,
      });
      expect(run.status, run.stderr).to.equal(0);
      return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { findings?: number; error?: string; written: number; maxRssMb?: number };
    };

    it('reads 256 MiB of JSON Lines in a 64 MiB V8 heap, peaking below the file size', function () {
      this.timeout(300_000);
      const result = runChild(256, 'repeats', 64);
      expect(result.error).to.equal(undefined);
      expect(result.written).to.be.greaterThan(255 * 1024 * 1024);
      expect(result.findings).to.equal(5);
      expect(result.maxRssMb).to.be.lessThan(256);
    });

    it('refuses more than 50,000 findings at the line that passes the cap, not at the end', function () {
      this.timeout(300_000);
      const result = runChild(64, 'distinct', 128);
      expect(result.error).to.match(/^the file holds more than 50,000 findings/);
      expect(result.written).to.be.lessThan(64 * 1024 * 1024 * 0.9);
    });
  });
});
