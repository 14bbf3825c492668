import { expect } from 'chai';
import type { Finding } from '../../src/domain/risks/finding.js';
import { cipherSuiteWeaknesses, createSslyzeParser } from '../../src/parsers/sslyze.js';
import { expectMatchesExpected, fixtureFiles, parseWhole, readExpected, readFixture } from './fixture-expectations.js';
import {
  expectDeepNestingRefused,
  expectMalformed,
  expectRefusedWhileWriting,
  parseInRandomChunks,
  utf8,
  withInvalidUtf8,
  XML_DOCUMENT,
} from './json-parser-checks.js';

const sslyze = () => createSslyzeParser();

const SSLYZE_3 = 'defectdojo-sslyze-one_target_many_vuln_old.json';
const SSLYZE_5 = 'defectdojo-sslyze-one_target_zero_vuln_new.json';
const SSLYZE_6 = 'securecodebox-sslyze-tls-v1-0.badssl.com_1010.json';

// The fixtures are real files; these helpers edit a parsed copy to reach checks no fixture triggers.
type Json = Record<string, any>;

function edited(name: string, edit: (report: Json, server: Json) => void): Uint8Array {
  const report = JSON.parse(readFixture('sslyze', name).toString('utf8')) as Json;
  edit(report, report['server_scan_results'][0]);
  return utf8(JSON.stringify(report));
}

function result(server: Json, command: string): Json {
  return server['scan_result'] ? server['scan_result'][command]['result'] : server['scan_commands_results'][command];
}

function deployment(server: Json): Json {
  return result(server, 'certificate_info')['certificate_deployments'][0];
}

function findingsOf(bytes: Uint8Array): Map<string, Finding> {
  return new Map(parseWhole(sslyze(), bytes).findings.map((finding) => [finding.fingerprint, finding]));
}

function failAllValidations(server: Json, error: string): void {
  for (const validation of deployment(server)['path_validation_results']) {
    Object.assign(validation, { was_validation_successful: false, verified_certificate_chain: null, validation_error: error });
  }
}

describe('sslyze parser', () => {
  describe('on real sslyze reports', () => {
    for (const name of fixtureFiles('sslyze')) {
      it(`finds the expected risks in ${name}`, () => {
        expectMatchesExpected(parseWhole(sslyze(), readFixture('sslyze', name)), readExpected('sslyze', name));
      });

      it(`gives the same result for ${name} written in random chunks`, () => {
        const bytes = readFixture('sslyze', name);
        const whole = parseWhole(sslyze(), bytes);
        for (const seed of [1, 2]) expect(parseInRandomChunks(sslyze(), bytes, seed, 2048)).to.deep.equal(whole);
      });
    }
  });

  describe('certificates', () => {
    it('judges expiry at the scan time written in the file, not today', () => {
      expect(findingsOf(readFixture('sslyze', SSLYZE_5)).has('sslyze:certificate_expired'), 'valid on 2022-01-28').to.equal(false);
      const later = edited(SSLYZE_5, (report) => (report['date_scans_started'] = '2023-02-01T00:00:00'));
      const expired = findingsOf(later).get('sslyze:certificate_expired');
      expect(expired?.definition.threat_level).to.equal('HIGH');
      expect(expired?.definition.additional_info).to.include({ judged_at: '2023-02-01T00:00:00.000Z' });
      const earlier = edited(SSLYZE_5, (report) => (report['date_scans_started'] = '2021-06-01T00:00:00'));
      expect(findingsOf(earlier).has('sslyze:certificate_not_yet_valid')).to.equal(true);
    });

    it('uses the trust-store verdict for expiry in sslyze 3, which records no scan time', () => {
      const bytes = edited(SSLYZE_3, (_report, server) => {
        for (const validation of deployment(server)['path_validation_results']) {
          Object.assign(validation, { verified_certificate_chain: null, openssl_error_string: 'certificate has expired' });
        }
      });
      const findings = findingsOf(bytes);
      expect(findings.get('sslyze:certificate_expired')?.definition.additional_info).to.include({ judged_at: 'sslyze trust-store validation' });
      expect(findings.has('sslyze:certificate_untrusted'), 'expiry is not also reported as untrusted').to.equal(false);
    });

    it('reports a host name mismatch from sslyze 5 and from the sslyze 6 validation error', () => {
      const fromFive = edited(SSLYZE_5, (_report, server) => (deployment(server)['leaf_certificate_subject_matches_hostname'] = false));
      expect(findingsOf(fromFive).get('sslyze:certificate_hostname_mismatch')?.definition.threat_level).to.equal('HIGH');
      const fromSix = edited(SSLYZE_6, (_report, server) =>
        failAllValidations(server, 'validation failed: leaf certificate has no matching subjectAltName for the given name'),
      );
      const findings = findingsOf(fromSix);
      expect(findings.has('sslyze:certificate_hostname_mismatch')).to.equal(true);
      expect(findings.has('sslyze:certificate_untrusted')).to.equal(false);
    });

    it('reports an untrusted chain as HIGH when every trust store rejects it and MEDIUM when some do', () => {
      const everywhere = edited(SSLYZE_6, (_report, server) => failAllValidations(server, 'validation failed: candidates exhausted'));
      const untrusted = findingsOf(everywhere).get('sslyze:certificate_untrusted');
      expect(untrusted?.definition.threat_level).to.equal('HIGH');
      const [certificate] = untrusted?.definition.additional_info['certificates'] as Array<{ failing_trust_stores: unknown[] }>;
      expect(certificate?.failing_trust_stores).to.have.length(5);
      const somewhere = edited(SSLYZE_6, (_report, server) => {
        const [first] = deployment(server)['path_validation_results'];
        Object.assign(first, { was_validation_successful: false, verified_certificate_chain: null, validation_error: 'unknown issuer' });
      });
      expect(findingsOf(somewhere).get('sslyze:certificate_untrusted')?.definition.threat_level).to.equal('MEDIUM');
    });

    it('reports a SHA-1 signed certificate', () => {
      const bytes = edited(SSLYZE_6, (_report, server) => (deployment(server)['received_certificate_chain'][0]['signature_hash_algorithm']['name'] = 'sha1'));
      expect(findingsOf(bytes).get('sslyze:certificate_weak_signature')?.definition.threat_level).to.equal('MEDIUM');
    });
  });

  it('reports Heartbleed, ROBOT, compression, missing TLS_FALLBACK_SCSV and client renegotiation', () => {
    const bytes = edited(SSLYZE_6, (_report, server) => {
      result(server, 'heartbleed')['is_vulnerable_to_heartbleed'] = true;
      result(server, 'robot')['robot_result'] = 'VULNERABLE_WEAK_ORACLE';
      result(server, 'tls_compression')['supports_compression'] = true;
      result(server, 'tls_fallback_scsv')['supports_fallback_scsv'] = false;
      result(server, 'session_renegotiation')['is_vulnerable_to_client_renegotiation_dos'] = true;
    });
    const levels = Object.fromEntries([...findingsOf(bytes)].map(([fingerprint, finding]) => [fingerprint, finding.definition.threat_level]));
    expect(levels).to.include({
      'sslyze:heartbleed': 'HIGH',
      'sslyze:robot': 'MEDIUM',
      'sslyze:tls_compression': 'MEDIUM',
      'sslyze:tls_fallback_scsv_missing': 'LOW',
      'sslyze:client_initiated_renegotiation': 'LOW',
    });
  });

  it('classifies TLS 1.2 cipher suites', () => {
    expect(cipherSuiteWeaknesses('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', false)).to.deep.equal({ reasons: [], broken: false });
    expect(cipherSuiteWeaknesses('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', false).reasons).to.deep.equal([]);
    expect(cipherSuiteWeaknesses('TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', false)).to.deep.equal({ reasons: ['CBC mode'], broken: false });
    expect(cipherSuiteWeaknesses('TLS_RSA_WITH_AES_128_GCM_SHA256', false).reasons).to.deep.equal(['no forward secrecy']);
    expect(cipherSuiteWeaknesses('TLS_RSA_WITH_3DES_EDE_CBC_SHA', false).broken).to.equal(true);
    expect(cipherSuiteWeaknesses('TLS_RSA_WITH_RC4_128_SHA', false).reasons).to.deep.equal(['RC4', 'no forward secrecy']);
    expect(cipherSuiteWeaknesses('TLS_DH_anon_WITH_AES_128_GCM_SHA256', true).broken).to.equal(true);
    expect(cipherSuiteWeaknesses('TLS_RSA_EXPORT_WITH_DES40_CBC_SHA', false).broken).to.equal(true);
  });

  it('finds nothing for servers sslyze could not reach', () => {
    const sslyze3 = utf8(JSON.stringify({ server_connectivity_errors: [{ server_string: 'a.example:443' }], server_scan_results: [] }));
    expect(parseWhole(sslyze(), sslyze3).findings).to.deep.equal([]);
    const sslyze5 = edited(SSLYZE_5, (_report, server) => (server['connectivity_status'] = 'ERROR'));
    expect(parseWhole(sslyze(), sslyze5).findings).to.deep.equal([]);
  });

  it("names the servers it never scanned, with sslyze's reason: invalid server strings and unreachable servers", () => {
    const unavailable = parseWhole(sslyze(), readFixture('sslyze', 'securecodebox-sslyze-unavailable-host.json'));
    expect(unavailable.unscanned).to.deep.equal([
      {
        host: '192.168.0.107',
        reason:
          'sslyze could not connect to 192.168.0.107:443: sslyze.errors.ConnectionToServerTimedOut: 192.168.0.107:443 -> "Connection to the server timed out".',
      },
    ]);
    const invalid = edited(SSLYZE_6, (report) => {
      report['invalid_server_strings'] = [{ server_string: 'gone.example.com:443{203.0.113.9}', error_message: 'Could not resolve hostname' }];
    });
    expect(parseWhole(sslyze(), invalid).unscanned).to.deep.equal([
      { host: 'gone.example.com', reason: 'sslyze could not scan gone.example.com:443{203.0.113.9}: Could not resolve hostname' },
    ]);
    expect(parseWhole(sslyze(), readFixture('sslyze', SSLYZE_6)).unscanned).to.deep.equal([]);
  });

  it('merges a server listed twice and keeps two ports of one host apart', () => {
    const twice = edited(SSLYZE_6, (report, server) => report['server_scan_results'].push(server));
    expect(parseWhole(sslyze(), twice).findings).to.have.length(2);
    const twoPorts = edited(SSLYZE_6, (report, server) => {
      report['server_scan_results'].push({ ...server, server_location: { ...server['server_location'], port: 2010 } });
    });
    expect(parseWhole(sslyze(), twoPorts).findings.map((finding) => finding.location.port)).to.deep.equal([1010, 1010, 2010, 2010]);
  });

  describe('refuses files that are not sslyze JSON', () => {
    it('an empty file', () => {
      expectMalformed(sslyze(), new Uint8Array(0), /^The file is empty; expected a JSON report from sslyze --json_out\.$/);
    });

    it('truncated JSON', () => {
      const bytes = readFixture('sslyze', SSLYZE_6);
      expectMalformed(sslyze(), bytes.subarray(0, 1000), /^The file is not valid JSON \(expected a JSON report from sslyze --json_out\): /);
    });

    it('bytes that are not UTF-8', () => {
      expectMalformed(sslyze(), withInvalidUtf8('{"server_scan_results": []}'), /not UTF-8 text/);
    });

    it('an XML file', () => {
      expectMalformed(sslyze(), XML_DOCUMENT, /looks like XML/);
    });

    it('a nuclei result, an empty array and a string where the servers belong', () => {
      expectMalformed(sslyze(), readFixture('nuclei', 'securecodebox-nuclei-log4shell.jsonl'), /'server_scan_results' is missing/);
      expectMalformed(sslyze(), utf8('[]'), /^Expected an object with a 'server_scan_results' array .*; got an empty array\.$/);
      expectMalformed(sslyze(), utf8('{"server_scan_results": "x"}'), /'server_scan_results' is a string, not an array/);
    });

    it('a command result of the wrong type, naming where it is', () => {
      const bytes = edited(SSLYZE_6, (_report, server) => (result(server, 'heartbleed')['is_vulnerable_to_heartbleed'] = 'yes'));
      expectMalformed(
        sslyze(),
        bytes,
        /^At server_scan_results\[0\]\.scan_result\.heartbleed\.result: .*'is_vulnerable_to_heartbleed' is a string, not a boolean\.$/,
      );
    });

    it('a file over the byte cap, while it is written', () => {
      expectRefusedWhileWriting((maxBytes) => createSslyzeParser({ maxBytes }));
    });

    it('100k nested arrays', () => {
      expectDeepNestingRefused(sslyze());
    });
  });
});
