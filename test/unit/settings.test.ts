import { expect } from 'chai';
import { resolve } from 'node:path';
import { loadSettings, SettingsError } from '../../src/config/settings.js';

describe('loadSettings', () => {
  describe('defaults (CONTRACT.md, Environment)', () => {
    const settings = loadSettings({});
    const defaults: ReadonlyArray<[string, unknown, unknown]> = [
      ['VIGIL_HOST defaults to 127.0.0.1', settings.host, '127.0.0.1'],
      ['VIGIL_PORT defaults to 8080', settings.port, 8080],
      ['VIGIL_DATA_DIR defaults to ./data, made absolute against the working directory', settings.dataDir, resolve(process.cwd(), 'data')],
      ['VIGIL_BOOTSTRAP_API_KEY is unset by default', settings.bootstrapApiKey, undefined],
      ['VIGIL_ALLOW_TARGETS is empty by default', settings.allowTargets, []],
      ['VIGIL_MAX_CONCURRENT_SCANS defaults to 10', settings.maxConcurrentScans, 10],
      ['VIGIL_SCAN_TTL_AFTER_FINISHED defaults to 7 days', settings.scanTtlAfterFinishedSeconds, 604_800],
      ['VIGIL_WEBHOOK_CA_FILE is unset by default', settings.webhookCaFile, undefined],
      ['VIGIL_RUNTIME defaults to embedded', settings.runtime, 'embedded'],
      ['VIGIL_NAMESPACE defaults to vigil', settings.namespace, 'vigil'],
      ['VIGIL_PUBLIC_URL defaults to http://127.0.0.1:8080', settings.publicUrl, 'http://127.0.0.1:8080'],
      ['VIGIL_UPLOAD_URL defaults to the public URL', settings.uploadUrl, 'http://127.0.0.1:8080'],
      ['VIGIL_SMTP_URL is unset by default', settings.smtpUrl, undefined],
      ['VIGIL_SMTP_FROM defaults to vigil@localhost', settings.smtpFrom, 'vigil@localhost'],
      ['LOG_LEVEL defaults to info', settings.logLevel, 'info'],
    ];
    for (const [name, actual, expected] of defaults) {
      it(name, () => expect(actual).to.deep.equal(expected));
    }

    it('makes every relative path absolute once, against the working directory', () => {
      const settings = loadSettings({ VIGIL_DATA_DIR: 'var/vigil', VIGIL_WEBHOOK_CA_FILE: 'certs/ca.pem', VIGIL_JOB_SETTINGS_FILE: './jobs.json' });
      expect(settings.dataDir).to.equal(resolve(process.cwd(), 'var/vigil'));
      expect(settings.webhookCaFile).to.equal(resolve(process.cwd(), 'certs/ca.pem'));
      expect(settings.jobSettingsFile).to.equal(resolve(process.cwd(), 'jobs.json'));
    });

    it('treats blank values as unset', () => {
      expect(loadSettings({ VIGIL_PORT: '  ', VIGIL_RUNTIME: '', VIGIL_SMTP_URL: ' ' })).to.deep.include({
        port: 8080,
        runtime: 'embedded',
        smtpUrl: undefined,
      });
    });
  });

  describe('values read from the environment', () => {
    it('VIGIL_NUCLEI_TEMPLATES defaults to nuclei-templates in the data directory, as an absolute path', () => {
      expect(loadSettings({}).nucleiTemplatesDir).to.equal(resolve('data/nuclei-templates'));
      expect(loadSettings({ VIGIL_DATA_DIR: '/var/lib/vigil' }).nucleiTemplatesDir).to.equal('/var/lib/vigil/nuclei-templates');
      expect(loadSettings({ VIGIL_NUCLEI_TEMPLATES: 'templates' }).nucleiTemplatesDir).to.equal(resolve('templates'));
      expect(loadSettings({ VIGIL_NUCLEI_TEMPLATES: '/opt/nuclei-templates' }).nucleiTemplatesDir).to.equal('/opt/nuclei-templates');
    });

    it('reads every variable', () => {
      const settings = loadSettings({
        VIGIL_HOST: '0.0.0.0',
        VIGIL_PORT: '9090',
        VIGIL_DATA_DIR: '/var/lib/vigil',
        VIGIL_BOOTSTRAP_API_KEY: 'key-123',
        VIGIL_ALLOW_TARGETS: '127.0.0.0/8, 10.0.0.0/8',
        VIGIL_MAX_CONCURRENT_SCANS: '3',
        VIGIL_SCAN_TTL_AFTER_FINISHED: '3600',
        VIGIL_WEBHOOK_CA_FILE: '/etc/ca.pem',
        VIGIL_RUNTIME: 'kubernetes',
        VIGIL_NAMESPACE: 'vigil-system',
        VIGIL_PUBLIC_URL: 'https://vigil.example.com',
        VIGIL_SMTP_URL: 'smtps://user:pass@mail.example.com:465',
        VIGIL_SMTP_FROM: 'alerts@example.com',
        LOG_LEVEL: 'debug',
      });
      expect(settings).to.deep.include({
        host: '0.0.0.0',
        port: 9090,
        dataDir: '/var/lib/vigil',
        bootstrapApiKey: 'key-123',
        maxConcurrentScans: 3,
        scanTtlAfterFinishedSeconds: 3600,
        webhookCaFile: '/etc/ca.pem',
        runtime: 'kubernetes',
        namespace: 'vigil-system',
        publicUrl: 'https://vigil.example.com',
        smtpUrl: 'smtps://user:pass@mail.example.com:465',
        smtpFrom: 'alerts@example.com',
        logLevel: 'debug',
      });
      expect(settings.allowTargets.map((cidr) => cidr.text)).to.deep.equal(['127.0.0.0/8', '10.0.0.0/8']);
    });

    const publicUrls: ReadonlyArray<[string, Record<string, string>, string]> = [
      ['VIGIL_PUBLIC_URL loses a trailing slash', { VIGIL_PUBLIC_URL: 'https://vigil.example.com/' }, 'https://vigil.example.com'],
      ['VIGIL_PUBLIC_URL loses several trailing slashes after a path', { VIGIL_PUBLIC_URL: 'https://example.com/vigil//' }, 'https://example.com/vigil'],
      ['the default VIGIL_PUBLIC_URL follows VIGIL_HOST and VIGIL_PORT', { VIGIL_HOST: '10.1.2.3', VIGIL_PORT: '9000' }, 'http://10.1.2.3:9000'],
      ['the default VIGIL_PUBLIC_URL brackets an IPv6 VIGIL_HOST', { VIGIL_HOST: '::1', VIGIL_PORT: '9000' }, 'http://[::1]:9000'],
      ['an explicit VIGIL_PUBLIC_URL wins over host and port', { VIGIL_HOST: '0.0.0.0', VIGIL_PUBLIC_URL: 'http://vigil.lan:80' }, 'http://vigil.lan:80'],
    ];
    for (const [name, env, expected] of publicUrls) {
      it(name, () => expect(loadSettings(env).publicUrl).to.equal(expected));
    }

    it('VIGIL_UPLOAD_URL follows VIGIL_PUBLIC_URL when unset', () => {
      expect(loadSettings({ VIGIL_PUBLIC_URL: 'https://vigil.example.com/' }).uploadUrl).to.equal('https://vigil.example.com');
    });

    it('VIGIL_UPLOAD_URL is separate from VIGIL_PUBLIC_URL when set', () => {
      const settings = loadSettings({ VIGIL_PUBLIC_URL: 'https://vigil.example.com', VIGIL_UPLOAD_URL: 'http://vigil.vigil.svc:8080/' });
      expect([settings.publicUrl, settings.uploadUrl]).to.deep.equal(['https://vigil.example.com', 'http://vigil.vigil.svc:8080']);
    });
  });

  describe('bad values stop start-up with a SettingsError naming the variable', () => {
    const bad: ReadonlyArray<[string, Record<string, string>, string]> = [
      ['VIGIL_PORT=abc', { VIGIL_PORT: 'abc' }, 'VIGIL_PORT'],
      ['VIGIL_PORT=70000', { VIGIL_PORT: '70000' }, 'VIGIL_PORT'],
      ['VIGIL_PORT=-1', { VIGIL_PORT: '-1' }, 'VIGIL_PORT'],
      ['VIGIL_PORT=80.5', { VIGIL_PORT: '80.5' }, 'VIGIL_PORT'],
      ['VIGIL_MAX_CONCURRENT_SCANS=0', { VIGIL_MAX_CONCURRENT_SCANS: '0' }, 'VIGIL_MAX_CONCURRENT_SCANS'],
      ['VIGIL_MAX_CONCURRENT_SCANS=many', { VIGIL_MAX_CONCURRENT_SCANS: 'many' }, 'VIGIL_MAX_CONCURRENT_SCANS'],
      ['VIGIL_SCAN_TTL_AFTER_FINISHED=-1', { VIGIL_SCAN_TTL_AFTER_FINISHED: '-1' }, 'VIGIL_SCAN_TTL_AFTER_FINISHED'],
      ['VIGIL_SCAN_TTL_AFTER_FINISHED past ten years', { VIGIL_SCAN_TTL_AFTER_FINISHED: '315360001' }, 'VIGIL_SCAN_TTL_AFTER_FINISHED'],
      ['VIGIL_RUNTIME=docker', { VIGIL_RUNTIME: 'docker' }, 'VIGIL_RUNTIME'],
      ['VIGIL_NAMESPACE=Bad_NS', { VIGIL_NAMESPACE: 'Bad_NS' }, 'VIGIL_NAMESPACE'],
      ['VIGIL_NAMESPACE of 64 characters', { VIGIL_NAMESPACE: 'a'.repeat(64) }, 'VIGIL_NAMESPACE'],
      ['VIGIL_NAMESPACE ending with a hyphen', { VIGIL_NAMESPACE: 'vigil-' }, 'VIGIL_NAMESPACE'],
      ['VIGIL_ALLOW_TARGETS=10.0.0.0/33', { VIGIL_ALLOW_TARGETS: '10.0.0.0/33' }, 'VIGIL_ALLOW_TARGETS'],
      ['VIGIL_ALLOW_TARGETS=nonsense', { VIGIL_ALLOW_TARGETS: 'nonsense' }, 'VIGIL_ALLOW_TARGETS'],
      ['VIGIL_ALLOW_TARGETS with an IPv6 range', { VIGIL_ALLOW_TARGETS: '127.0.0.0/8,::1/128' }, 'VIGIL_ALLOW_TARGETS'],
      ['VIGIL_PUBLIC_URL=ftp://x', { VIGIL_PUBLIC_URL: 'ftp://x' }, 'VIGIL_PUBLIC_URL'],
      ['VIGIL_PUBLIC_URL without a scheme', { VIGIL_PUBLIC_URL: 'vigil.example.com' }, 'VIGIL_PUBLIC_URL'],
      ['VIGIL_PUBLIC_URL=http://', { VIGIL_PUBLIC_URL: 'http://' }, 'VIGIL_PUBLIC_URL'],
      ['VIGIL_UPLOAD_URL without a scheme', { VIGIL_UPLOAD_URL: 'vigil.vigil.svc:8080' }, 'VIGIL_UPLOAD_URL'],
      ['VIGIL_SMTP_URL=http://x', { VIGIL_SMTP_URL: 'http://x' }, 'VIGIL_SMTP_URL'],
      ['VIGIL_SMTP_URL=smtp://', { VIGIL_SMTP_URL: 'smtp://' }, 'VIGIL_SMTP_URL'],
      ['VIGIL_SMTP_FROM without an @', { VIGIL_SMTP_FROM: 'vigil' }, 'VIGIL_SMTP_FROM'],
      ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ];
    for (const [name, env, variable] of bad) {
      it(`${name} is refused`, () => {
        expect(() => loadSettings(env)).to.throw(SettingsError, variable);
      });
    }

    it('says which values are allowed for an enumerated variable', () => {
      expect(() => loadSettings({ VIGIL_RUNTIME: 'docker' })).to.throw(SettingsError, /embedded, kubernetes/);
      expect(() => loadSettings({ LOG_LEVEL: 'loud' })).to.throw(SettingsError, /fatal, error, warn, info, debug, trace, silent/);
    });

    it('says the range of a numeric variable', () => {
      expect(() => loadSettings({ VIGIL_PORT: '70000' })).to.throw(SettingsError, /0 to 65535/);
    });
  });
});
