import { expect } from 'chai';
import { findingsByTarget, givenTarget, inferTargets } from '../../src/domain/imports/inferred-targets.js';
import type { Finding } from '../../src/domain/risks/finding.js';
import { parseCidr } from '../../src/domain/targets/ipv4.js';

function finding(host: string, fingerprint: string): Finding {
  return {
    fingerprint,
    location: { host },
    definition: { scan_type: 'NMAP', title: fingerprint, threat_level: 'INFO', description: '', solution: '', cvss: '', additional_info: {} },
  };
}

describe('inferred targets of an uploaded file', () => {
  it('makes each public host a target with its facts, and skips the rest with the Target rule they break', () => {
    const inferred = inferTargets(
      [
        { address: '45.33.32.156', hostname: 'scanme.nmap.org', os: 'Linux 3.0' },
        { address: '192.168.1.7' },
        { address: '2600:3c01::f03c:91ff:fe18:bb2f' },
        { address: 'Scanme.Nmap.org.' },
      ],
      [],
    );
    expect(inferred.targets).to.deep.equal([
      { target: '45.33.32.156', hosts: ['45.33.32.156'], hostname: 'scanme.nmap.org', os: 'Linux 3.0' },
      { target: 'scanme.nmap.org', hosts: ['Scanme.Nmap.org.'] },
    ]);
    expect(inferred.skipped.map((host) => host.host)).to.deep.equal(['192.168.1.7', '2600:3c01::f03c:91ff:fe18:bb2f']);
    expect(inferred.skipped[0]!.reason).to.match(/192\.168\.0\.0\/16/);
    expect(inferred.skipped[1]!.reason).to.match(/IPv6/);
  });

  it('merges hosts that normalise to one target', () => {
    const inferred = inferTargets([{ address: 'WWW.example.com' }, { address: 'www.example.com.', os: 'FreeBSD' }], []);
    expect(inferred.targets).to.deep.equal([{ target: 'www.example.com', hosts: ['WWW.example.com', 'www.example.com.'] }]);
  });

  it('accepts private hosts inside VIGIL_ALLOW_TARGETS', () => {
    expect(inferTargets([{ address: '10.1.2.3' }], [parseCidr('10.0.0.0/8')]).targets.map((t) => t.target)).to.deep.equal(['10.1.2.3']);
  });

  it('cuts facts an untrusted file makes too long', () => {
    const [target] = inferTargets([{ address: '45.33.32.156', os: 'L'.repeat(10_000) }], []).targets;
    expect(target!.os).to.have.length(255);
  });

  it('gives each finding to the target of its host and drops findings of skipped hosts', () => {
    const inferred = inferTargets([{ address: '45.33.32.156' }, { address: '10.0.0.1' }], []);
    const byTarget = findingsByTarget(inferred.targets, [finding('45.33.32.156', 'a'), finding('10.0.0.1', 'b')]);
    expect([...byTarget].map(([target, findings]) => [target, findings.map((f) => f.fingerprint)])).to.deep.equal([['45.33.32.156', ['a']]]);
  });

  it('gives every finding of a web scanner report to the target given with it', () => {
    const target = givenTarget('https://WWW.example.com', []);
    expect(target).to.deep.equal({ target: 'https://www.example.com', hosts: [] });
    const byTarget = findingsByTarget([target], [finding('www.example.com', 'a'), finding('cdn.example.net', 'b')]);
    expect(byTarget.get('https://www.example.com')!.map((f) => f.fingerprint)).to.deep.equal(['a', 'b']);
  });
});
