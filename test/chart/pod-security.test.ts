/**
 * Which Pod Security level each scan type's pod needs, computed from the
 * Job the runner really builds, and the README's table and the chart's
 * namespace labels agreeing with it.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { SCAN_TYPES, type ScanType } from '../../src/domain/risks/finding.js';
import { buildScanJob, uploadTokenSecretName } from '../../src/runtime/kubernetes/job-manifest.js';
import { defaultJobSettings } from '../../src/runtime/kubernetes/job-settings.js';
import { renderChart } from '../support/chart.js';
import { podSecurityLevel, type PodSecurityLevel, type PodSpecLike } from '../support/pod-security.js';

const TARGETS: Record<ScanType, string[]> = {
  NESSUS: ['93.184.216.34'],
  NMAP: ['93.184.216.34'],
  NMAP_UDP: ['93.184.216.34'],
  NUCLEI: ['https://www.example.com/'],
  OPENVAS: ['93.184.216.34'],
  OWASP_ZAP: ['https://shop.example.com/'],
  OWASP_ZAP_ACTIVE: ['https://shop.example.com/'],
  SSLYZE: ['www.example.com'],
};

function scanPod(type: ScanType): PodSpecLike {
  const scan = { name: 'nightly', namespace: 'vigil-acme', uid: 'uid-1', type, id: '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17' };
  const job = buildScanJob({
    scan,
    targets: TARGETS[type],
    settings: defaultJobSettings('0.1.0'),
    uploadUrl: 'http://vigil.vigil.svc:8080',
    uploadTokenSecretName: uploadTokenSecretName('nightly'),
    createdAt: new Date(),
  });
  return job.spec.template.spec as unknown as PodSpecLike;
}

/** NMAP_UDP's scanner needs raw sockets: root with NET_RAW, which baseline no longer allows. */
const EXPECTED: Record<ScanType, PodSecurityLevel> = {
  NESSUS: 'restricted',
  NMAP: 'restricted',
  NMAP_UDP: 'privileged',
  NUCLEI: 'restricted',
  OPENVAS: 'restricted',
  OWASP_ZAP: 'restricted',
  OWASP_ZAP_ACTIVE: 'restricted',
  SSLYZE: 'restricted',
};

describe('Pod Security levels', () => {
  for (const type of SCAN_TYPES) {
    it(`${type} scanner pods need the ${EXPECTED[type]} level`, () => expect(podSecurityLevel(scanPod(type))).to.equal(EXPECTED[type]));
  }

  it('the docs/kubernetes.md table says the same for every scan type', () => {
    const readme = readFileSync(new URL('../../docs/kubernetes.md', import.meta.url), 'utf8');
    for (const type of SCAN_TYPES) expect(readme, type).to.include(`| \`${type}\` | \`${EXPECTED[type]}\` |`);
  });

  it('the vigil serve pod of the chart fits restricted', () => {
    const deployment = renderChart().find((object) => object.kind === 'Deployment')!;
    expect(podSecurityLevel(deployment.spec.template.spec)).to.equal('restricted');
  });

  it('the check itself finds what each level refuses', () => {
    const container = {
      name: 'c',
      securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    };
    expect(podSecurityLevel({ containers: [container] })).to.equal('restricted');
    expect(podSecurityLevel({ containers: [{ ...container, securityContext: { ...container.securityContext, runAsNonRoot: false } }] })).to.equal('baseline');
    expect(podSecurityLevel({ containers: [container], volumes: [{ name: 'v', hostPath: { path: '/' } }] })).to.equal('privileged');
    expect(
      podSecurityLevel({ containers: [{ ...container, securityContext: { ...container.securityContext, capabilities: { drop: ['ALL'], add: ['CHOWN'] } } }] }),
    ).to.equal('baseline');
  });
});
