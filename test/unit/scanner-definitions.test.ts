import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { SCAN_TYPES, type ScanType } from '../../src/domain/risks/finding.js';
import { formatVigilProgress, scannerFor, SCANNER_IMAGES, VIGIL_VERSION, type ScannerInput } from '../../src/domain/scanners/index.js';
import { NUCLEI_IMAGE_TEMPLATES, NUCLEI_TEMPLATES_VERSION } from '../../src/domain/scanners/images.js';

const OUT = '/work/scan-1';

function input(targets: string[], extra: Partial<ScannerInput> = {}): ScannerInput {
  return { targets, outputDir: OUT, ...extra };
}

/** True when `flag` is directly followed by `value` in args. */
function hasOption(args: readonly string[], flag: string, value: string): boolean {
  return args.some((arg, index) => arg === flag && args[index + 1] === value);
}

const SAMPLE_TARGETS: Record<ScanType, string[]> = {
  NESSUS: ['93.184.216.34', 'www.example.com'],
  NMAP: ['93.184.216.34', 'https://www.example.com/login'],
  NMAP_UDP: ['93.184.216.34'],
  NUCLEI: ['https://www.example.com/', 'api.example.com'],
  OPENVAS: ['93.184.216.34'],
  OWASP_ZAP: ['https://shop.example.com/'],
  OWASP_ZAP_ACTIVE: ['https://shop.example.com/'],
  SSLYZE: ['www.example.com', 'https://api.example.com:8443/v1'],
};

describe('scanner definitions', () => {
  describe('every scan type', () => {
    for (const type of SCAN_TYPES) {
      it(`${type} has a definition whose image tag is pinned to a version`, () => {
        const definition = scannerFor(type);
        expect(definition.type).to.equal(type);
        const { image } = definition.container(input(SAMPLE_TARGETS[type]));
        const tag = image.slice(image.lastIndexOf(':') + 1);
        expect(image).to.not.match(/:latest$/);
        expect(image.lastIndexOf(':')).to.be.greaterThan(image.lastIndexOf('/'));
        // A derived image (nuclei with its templates) names both pinned versions.
        expect(tag, image).to.match(/^v?\d+\.\d+(\.\d+)?(-templates-v\d+\.\d+\.\d+)?$/);
      });

      it(`${type} names its output files, relative to outputDir, with content types`, () => {
        const { outputs } = scannerFor(type);
        expect(outputs).to.not.be.empty;
        for (const output of outputs) {
          expect(output.file).to.match(/^[\w.-]+$/);
          expect(output.contentType).to.match(/^application\/[\w.+-]+$/);
        }
      });

      it(`${type} writes every output under outputDir`, () => {
        const definition = scannerFor(type);
        const containerText = [
          ...definition.container(input(SAMPLE_TARGETS[type])).args,
          ...(definition.inputs?.(input(SAMPLE_TARGETS[type])).map((file) => file.content) ?? []),
        ].join('\n');
        for (const output of definition.outputs) {
          const written = containerText.includes(`${OUT}/${output.file}`) || (containerText.includes(OUT) && containerText.includes(output.file));
          expect(written, `${output.file} in ${containerText}`).to.equal(true);
        }
      });
    }

    it('only NMAP_UDP asks for a capability, and only NET_RAW', () => {
      const asking = SCAN_TYPES.filter((type) => (scannerFor(type).container(input(SAMPLE_TARGETS[type])).capabilities ?? []).length > 0);
      expect(asking).to.deep.equal(['NMAP_UDP']);
      expect(scannerFor('NMAP_UDP').container(input(['93.184.216.34'])).capabilities).to.deep.equal(['NET_RAW']);
    });

    it("pins Vigil's own image to the version in package.json", () => {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      expect(VIGIL_VERSION).to.equal(pkg.version);
      expect(SCANNER_IMAGES.vigil).to.equal(`ghcr.io/vigil-dev/vigil:${pkg.version}`);
    });

    it('refuses more targets than the type takes per Scan, and none at all', () => {
      expect(() => scannerFor('OWASP_ZAP').container(input(['https://a.example.com', 'https://b.example.com']))).to.throw(
        InvalidRequestError,
        /at most 1 target/,
      );
      expect(() => scannerFor('NUCLEI').local(input(Array.from({ length: 11 }, (_, i) => `h${i}.example.com`)))).to.throw(
        InvalidRequestError,
        /at most 10 targets/,
      );
      expect(() => scannerFor('NMAP').container(input([]))).to.throw(InvalidRequestError, /at least one target/);
    });

    it('never passes a target that would read as an option', () => {
      for (const type of ['NMAP', 'SSLYZE', 'OPENVAS'] as const) {
        expect(() => scannerFor(type).container(input(['--script=evil']))).to.throw(InvalidRequestError, /starts with '-'/);
      }
      expect(() => scannerFor('NMAP').local(input(['a.example.com b.example.com']))).to.throw(InvalidRequestError);
    });
  });

  describe('NMAP and NMAP_UDP (nmap)', () => {
    it('NMAP runs an unprivileged TCP connect scan of the top ports with service detection', () => {
      const { image, command, args } = scannerFor('NMAP').container(input(['93.184.216.34', 'https://www.example.com/login', 'http://www.example.com:8080/']));
      expect(image).to.equal('instrumentisto/nmap:7.95');
      expect(command).to.deep.equal(['nmap']);
      expect(args).to.include.members(['-sT', '-sV', '-Pn', '-T4']);
      expect(args).to.not.include('-sU');
      expect(hasOption(args, '--top-ports', '1000')).to.equal(true);
      expect(hasOption(args, '--stats-every', '2s')).to.equal(true);
      expect(hasOption(args, '-oX', `${OUT}/nmap.xml`)).to.equal(true);
      expect(args.slice(-2)).to.deep.equal(['93.184.216.34', 'www.example.com']);
    });

    it('NMAP_UDP scans the top 100 UDP ports', () => {
      const { args } = scannerFor('NMAP_UDP').container(input(['93.184.216.34']));
      expect(args).to.include.members(['-sU', '-Pn']);
      expect(args).to.not.include('-sT');
      expect(hasOption(args, '--top-ports', '100')).to.equal(true);
      expect(hasOption(args, '-oX', `${OUT}/nmap.xml`)).to.equal(true);
    });

    it('runs the local nmap with the same arguments', () => {
      for (const type of ['NMAP', 'NMAP_UDP'] as const) {
        const definition = scannerFor(type);
        expect(definition.local(input(['93.184.216.34']))).to.deep.equal({ program: 'nmap', args: definition.container(input(['93.184.216.34'])).args });
      }
      expect(scannerFor('NMAP').outputs).to.deep.equal([{ file: 'nmap.xml', contentType: 'application/xml' }]);
    });

    it('reads the percentage of every scan phase from --stats-every lines', () => {
      const progress = scannerFor('NMAP').progressFrom;
      expect(progress('Connect Scan Timing: About 12.34% done; ETC: 10:42 (0:00:20 remaining)')).to.equal(12.34);
      expect(progress('UDP Scan Timing: About 55.10% done; ETC: 10:45 (0:01:02 remaining)')).to.equal(55.1);
      expect(progress('Service scan Timing: About 66.67% done; ETC: 10:46 (0:00:05 remaining)')).to.equal(66.67);
      expect(progress('SYN Stealth Scan Timing: About 100.00% done; ETC: 10:47 (0:00:00 remaining)')).to.equal(100);
      expect(scannerFor('NMAP_UDP').progressFrom('UDP Scan Timing: About 3.00% done')).to.equal(3);
    });

    it('ignores nmap lines without a percentage', () => {
      const progress = scannerFor('NMAP').progressFrom;
      expect(progress('Stats: 0:00:02 elapsed; 0 hosts completed (1 up), 1 undergoing Connect Scan')).to.equal(undefined);
      expect(progress('Discovered open port 443/tcp on 93.184.216.34')).to.equal(undefined);
      expect(progress('Nmap done: 1 IP address (1 host up) scanned in 12.31 seconds')).to.equal(undefined);
      expect(progress('')).to.equal(undefined);
    });
  });

  describe('NUCLEI (nuclei)', () => {
    const targets = ['https://www.example.com/', 'api.example.com'];

    it('writes JSON Lines and prints JSON statistics every 5 seconds', () => {
      const { image, args } = scannerFor('NUCLEI').container(input(targets));
      expect(image).to.match(/^ghcr\.io\/vigil-dev\/vigil-nuclei:v3\.\d+\.\d+-templates-v10\.\d+\.\d+$/);
      expect(args).to.include.members(['-jsonl', '-stats', '-sj']);
      expect(hasOption(args, '-o', `${OUT}/nuclei.jsonl`)).to.equal(true);
      expect(hasOption(args, '-si', '5')).to.equal(true);
      expect(scannerFor('NUCLEI').outputs).to.deep.equal([{ file: 'nuclei.jsonl', contentType: 'application/x-ndjson' }]);
    });

    it('reads its targets from a list file the runner writes first', () => {
      const definition = scannerFor('NUCLEI');
      const { args } = definition.container(input(targets));
      const [list] = definition.inputs!(input(targets));
      expect(hasOption(args, '-l', `${OUT}/${list!.file}`)).to.equal(true);
      expect(list!.content).to.equal('https://www.example.com/\napi.example.com\n');
      expect(definition.outputs.map((output) => output.file)).to.not.include(list!.file);
      const local = definition.local(input(targets, { nucleiTemplatesDir: '/opt/nuclei-templates' }))!;
      expect(local.program).to.equal('nuclei');
      expect(local.args).to.deep.equal(args);
    });

    it('never downloads templates: the update check is off and the templates directory is named', () => {
      const { args } = scannerFor('NUCLEI').container(input(targets));
      expect(args).to.include('-duc');
      expect(hasOption(args, '-t', NUCLEI_IMAGE_TEMPLATES)).to.equal(true);
      const local = scannerFor('NUCLEI').local(input(targets, { nucleiTemplatesDir: '/srv/templates' }))!;
      expect(local.args).to.include('-duc');
      expect(hasOption(local.args, '-t', '/srv/templates')).to.equal(true);
    });

    it('locally, requires the templates directory and says how to get a pinned release', () => {
      const local = scannerFor('NUCLEI').local(input(targets, { nucleiTemplatesDir: '/srv/templates' }))!;
      expect(local.requires).to.have.length(1);
      expect(local.requires![0]!.path).to.equal('/srv/templates');
      expect(local.requires![0]!.missing).to.include(
        `--branch ${NUCLEI_TEMPLATES_VERSION} https://github.com/projectdiscovery/nuclei-templates /srv/templates`,
      );
      expect(local.requires![0]!.missing).to.include('VIGIL_NUCLEI_TEMPLATES');
      expect(local.contentVersion).to.deep.equal({ name: 'nuclei-templates', file: '/srv/templates/.vigil-templates-version' });
      expect(() => scannerFor('NUCLEI').local(input(targets))).to.throw(/nucleiTemplatesDir/);
    });

    it('records the templates baked into its default image', () => {
      expect(scannerFor('NUCLEI').imageContent).to.deep.equal({
        image: SCANNER_IMAGES.nuclei,
        description: `nuclei-templates ${NUCLEI_TEMPLATES_VERSION} (baked into ${SCANNER_IMAGES.nuclei})`,
      });
      expect(SCANNER_IMAGES.nuclei).to.include(`-templates-${NUCLEI_TEMPLATES_VERSION}`);
    });

    it('reads the percentage from JSON and text statistics lines', () => {
      const progress = scannerFor('NUCLEI').progressFrom;
      expect(
        progress(
          '{"duration":"0:00:05","errors":"0","hosts":"2","matched":"1","percent":"37","requests":"1110","rps":"222","startedAt":"2026-01-10T10:42:00.123Z","templates":"8212","total":"3000"}',
        ),
      ).to.equal(37);
      expect(progress('{"duration":"0:01:00","percent":100,"requests":3000,"total":3000}')).to.equal(100);
      expect(progress('[0:00:05] | Templates: 8212 | Hosts: 2 | RPS: 222 | Matched: 1 | Errors: 0 | Requests: 1110/3000 (37%)')).to.equal(37);
    });

    it('ignores findings, log lines and broken JSON', () => {
      const progress = scannerFor('NUCLEI').progressFrom;
      expect(
        progress('{"template-id":"tech-detect","info":{"name":"Wappalyzer","severity":"info"},"matched-at":"https://www.example.com/","percent":"5"}'),
      ).to.equal(undefined);
      expect(progress('[INF] Current nuclei version: v3.11.1 (latest)')).to.equal(undefined);
      expect(progress('{"percent":"12", "requests"')).to.equal(undefined);
      expect(progress(`{"percent":"12","requests":"1","total":"2","pad":"${'x'.repeat(5000)}"}`)).to.equal(undefined);
    });
  });

  describe('SSLYZE (sslyze)', () => {
    it('scans host:port endpoints and writes JSON', () => {
      const definition = scannerFor('SSLYZE');
      const { image, command, args } = definition.container(input(['www.example.com', 'https://api.example.com:8443/v1', 'http://www.example.com/']));
      expect(image).to.match(/^nablac0d3\/sslyze:6\.\d+\.\d+$/);
      expect(command).to.equal(undefined);
      expect(args).to.deep.equal(['--mozilla_config=disable', `--json_out=${OUT}/sslyze.json`, 'www.example.com:443', 'api.example.com:8443']);
      expect(definition.local(input(['www.example.com']))).to.deep.equal({
        program: 'sslyze',
        args: ['--mozilla_config=disable', `--json_out=${OUT}/sslyze.json`, 'www.example.com:443'],
      });
      expect(definition.outputs).to.deep.equal([{ file: 'sslyze.json', contentType: 'application/json' }]);
      expect(definition.progressFrom('SCANS COMPLETED IN 3.21 S')).to.equal(undefined);
    });
  });

  describe('OWASP_ZAP and OWASP_ZAP_ACTIVE (ZAP automation framework)', () => {
    const target = ['https://shop.example.com/'];

    it('runs zap.sh with the plan the runner writes into outputDir', () => {
      for (const type of ['OWASP_ZAP', 'OWASP_ZAP_ACTIVE'] as const) {
        const definition = scannerFor(type);
        const { image, command, args } = definition.container(input(target));
        expect(image).to.match(/^ghcr\.io\/zaproxy\/zaproxy:2\.16\.\d+$/);
        expect(command).to.deep.equal(['zap.sh']);
        expect(args[0]).to.equal('-cmd');
        const [plan] = definition.inputs!(input(target));
        expect(hasOption(args, '-autorun', `${OUT}/${plan!.file}`)).to.equal(true);
        expect(definition.outputs).to.deep.equal([{ file: 'zap-report.json', contentType: 'application/json' }]);
      }
    });

    it('runs a local zap.sh with its own ZAP home under outputDir', () => {
      const local = scannerFor('OWASP_ZAP').local(input(target))!;
      expect(local.program).to.equal('zap.sh');
      expect(hasOption(local.args, '-dir', `${OUT}/zap-home`)).to.equal(true);
      expect(hasOption(local.args, '-autorun', `${OUT}/zap-plan.yaml`)).to.equal(true);
    });

    it('runs the active scan only for OWASP_ZAP_ACTIVE', () => {
      const jobTypes = (type: 'OWASP_ZAP' | 'OWASP_ZAP_ACTIVE') =>
        (parse(scannerFor(type).inputs!(input(target))[0]!.content) as { jobs: Array<{ type: string }> }).jobs.map((job) => job.type);
      expect(jobTypes('OWASP_ZAP')).to.include.members(['spider', 'passiveScan-wait', 'report']).and.not.include('activeScan');
      expect(jobTypes('OWASP_ZAP_ACTIVE')).to.include.members(['spider', 'passiveScan-wait', 'activeScan', 'report']);
    });

    it("passes the target's settings into the plan and its anti-CSRF token names to ZAP", () => {
      const settings = { included_domains: ['cdn.example.com'], anti_csrf_tokens: ['shop_csrf'], headers: [{ key: 'X-Team', value: 'red' }] };
      const definition = scannerFor('OWASP_ZAP');
      const plan = parse(definition.inputs!(input(target, { settings }))[0]!.content) as { env: { contexts: Array<{ includePaths: string[] }> } };
      expect(plan.env.contexts[0]!.includePaths).to.have.length(2);
      const { args } = definition.container(input(target, { settings }));
      const names = args.filter((arg) => /^anticsrf\.tokens\.token\(\d+\)\.name=/.test(arg));
      expect(names.at(-1)).to.match(/\)\.name=shop_csrf$/);
      expect(names).to.include('anticsrf.tokens.token(0).name=anticsrf');
      expect(definition.container(input(target)).args.some((arg) => arg.startsWith('anticsrf'))).to.equal(false);
    });

    it('refuses settings that are not ZAP settings, naming the field', () => {
      expect(() => scannerFor('OWASP_ZAP').inputs!(input(target, { settings: { seed_urls: ['ftp://x'] } }))).to.throw(
        InvalidRequestError,
        /scanner_settings\.zap\.seed_urls/,
      );
    });

    it('turns a bare host into an https URL to crawl', () => {
      const plan = parse(scannerFor('OWASP_ZAP').inputs!(input(['shop.example.com']))[0]!.content) as { env: { contexts: Array<{ urls: string[] }> } };
      expect(plan.env.contexts[0]!.urls).to.deep.equal(['https://shop.example.com/']);
    });

    it("reports progress as the plan's jobs start, later phases higher", () => {
      const passive = scannerFor('OWASP_ZAP').progressFrom;
      const active = scannerFor('OWASP_ZAP_ACTIVE').progressFrom;
      expect(passive('Job spider started')).to.equal(5);
      expect(passive('Job passiveScan-wait started')).to.equal(70);
      expect(active('Job passiveScan-wait started')).to.be.lessThan(active('Job activeScan started')!);
      expect(active('7536 [ZAP-daemon] INFO org.parosproxy.paros.CommandLine - Job activeScan started')).to.equal(30);
      expect(active('Job report started')).to.equal(95);
      expect(active('Automation plan succeeded!')).to.equal(100);
      expect(passive('Job spider found 47 URLs')).to.equal(undefined);
      expect(passive('Job activeScan started')).to.equal(undefined);
    });
  });

  describe("OPENVAS and NESSUS (Vigil's own CLI)", () => {
    const cases = [
      { type: 'OPENVAS', subcommand: 'openvas', file: 'openvas.xml' },
      { type: 'NESSUS', subcommand: 'nessus', file: 'report.nessus' },
    ] as const;

    for (const { type, subcommand, file } of cases) {
      it(`${type} runs \`vigil scanner ${subcommand}\` from Vigil's image, writing ${file}`, () => {
        const definition = scannerFor(type);
        const { image, command, args } = definition.container(input(['93.184.216.34', 'https://www.example.com/']));
        expect(image).to.equal(SCANNER_IMAGES.vigil);
        expect(command).to.deep.equal(['vigil']);
        expect(args.slice(0, 2)).to.deep.equal(['scanner', subcommand]);
        expect(hasOption(args, '--output', `${OUT}/${file}`)).to.equal(true);
        expect(args.slice(-2)).to.deep.equal(['93.184.216.34', 'www.example.com']);
        expect(definition.outputs).to.deep.equal([{ file, contentType: 'application/xml' }]);
      });

      it(`${type} runs locally through this Node.js binary when given the CLI path, else \`vigil\` on PATH`, () => {
        const definition = scannerFor(type);
        const withPath = definition.local(input(['93.184.216.34'], { cliPath: '/opt/vigil/dist/src/cli/main.js' }))!;
        expect(withPath.program).to.equal(process.execPath);
        expect(withPath.args.slice(0, 3)).to.deep.equal(['/opt/vigil/dist/src/cli/main.js', 'scanner', subcommand]);
        expect(definition.local(input(['93.184.216.34']))!.program).to.equal('vigil');
      });
    }

    it('reads the progress lines the CLI prints with formatVigilProgress', () => {
      const progress = scannerFor('OPENVAS').progressFrom;
      expect(progress(formatVigilProgress(42))).to.equal(42);
      expect(progress(formatVigilProgress(99.6))).to.equal(100);
      expect(progress('connecting to gvmd')).to.equal(undefined);
    });
  });
});
