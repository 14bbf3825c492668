import { expect } from 'chai';
import { defaultJobSettings, jobSettingsFrom } from '../../src/runtime/kubernetes/job-settings.js';
import { buildScanJob } from '../../src/runtime/kubernetes/job-manifest.js';

describe('scanner Job settings from VIGIL_JOB_SETTINGS_FILE', () => {
  const defaults = defaultJobSettings('0.1.0');
  const scan = { name: 'nightly', namespace: 'vigil-acme', uid: 'uid-1', type: 'NMAP' as const, id: '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17' };

  it('lays the overrides over the defaults and the Job uses them', () => {
    const settings = jobSettingsFrom(
      {
        images: { NMAP: 'registry.example.com/mirror/nmap:7.95' },
        resources: { NMAP: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2', memory: '512Mi' } } },
        nodeSelector: { pool: 'scanners' },
      },
      defaults,
    );
    expect(settings.serviceAccountName).to.equal(defaults.serviceAccountName);
    const job = buildScanJob({
      scan,
      targets: ['scanme.example.com'],
      settings,
      uploadUrl: 'http://vigil:8080',
      uploadTokenSecretName: 'nightly-upload',
      createdAt: new Date(),
    });
    const scanner = job.spec.template.spec.initContainers!.find((container) => container.name === 'scanner')!;
    expect(scanner.image).to.equal('registry.example.com/mirror/nmap:7.95');
    expect(scanner.resources?.limits).to.deep.equal({ cpu: '2', memory: '512Mi' });
    expect(job.spec.template.spec.nodeSelector).to.deep.equal({ pool: 'scanners' });
  });

  it('refuses an unknown key, naming it and the allowed ones', () => {
    expect(() => jobSettingsFrom({ resoures: {} }, defaults)).to.throw(/unknown keys resoures; allowed: vigilImage, images/);
  });

  it('refuses an unpinned image and a non-object', () => {
    expect(() => jobSettingsFrom({ images: { NMAP: 'nmap:latest' } }, defaults)).to.throw(/pinned/);
    expect(() => jobSettingsFrom(['x'], defaults)).to.throw(/JSON object/);
  });
});
