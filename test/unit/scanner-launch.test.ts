import { expect } from 'chai';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scannerFor } from '../../src/domain/scanners/index.js';
import type { ScanType } from '../../src/domain/risks/finding.js';
import { containerRunArgs, containerUser, decideLaunch, findProgram, type LaunchOptions } from '../../src/runtime/embedded/scanner-launch.js';
import { tempDir } from '../support/temp-dir.js';

/** A directory of empty executables (and one non-executable file) to stand for PATH. */
function binDir(root: string, name: string, programs: string[]): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const program of programs) {
    writeFileSync(join(dir, program), '#!/bin/sh\n');
    chmodSync(join(dir, program), 0o755);
  }
  return dir;
}

describe('scanner launch in the embedded runtime', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  const decide = (type: ScanType, options: Partial<LaunchOptions> & { searchPath: string }) => {
    const definition = scannerFor(type);
    const input = {
      targets: type === 'OWASP_ZAP' ? ['https://example.com'] : ['example.com'],
      outputDir: '/data/work/scan-1',
      cliPath: '/opt/vigil/dist/src/cli/main.js',
      nucleiTemplatesDir: '/data/nuclei-templates',
    };
    return decideLaunch({
      definition,
      local: definition.local(input)!,
      container: definition.container(input),
      scanId: 'scan-1',
      workDir: '/data/work/scan-1',
      options: { mode: 'auto', engine: undefined, uid: 1000, gid: 1000, ...options },
    });
  };

  describe('findProgram', () => {
    it('finds an executable in the first directory of the search path that has it', () => {
      const first = binDir(dir.path, 'a', []);
      const second = binDir(dir.path, 'b', ['nmap']);
      expect(findProgram('nmap', [first, second].join(':'))).to.equal(join(second, 'nmap'));
    });
    it('passes over a file that is not executable and a directory of the same name', () => {
      const plain = join(dir.path, 'plain');
      mkdirSync(join(plain, 'sslyze'), { recursive: true });
      writeFileSync(join(plain, 'nmap'), '');
      expect(findProgram('nmap', plain)).to.equal(undefined);
      expect(findProgram('sslyze', plain)).to.equal(undefined);
    });
    it('takes an absolute path as it is', () => {
      const bin = binDir(dir.path, 'abs', ['tool']);
      expect(findProgram(join(bin, 'tool'), '')).to.equal(join(bin, 'tool'));
    });
  });

  describe('decideLaunch', () => {
    it('auto: runs the local program when it is installed, even with an engine present', () => {
      const bin = binDir(dir.path, 'bin', ['sslyze', 'docker']);
      const decision = decide('SSLYZE', { searchPath: bin });
      expect(decision).to.have.nested.property('launch.program', join(bin, 'sslyze'));
      expect(decision).not.to.have.nested.property('launch.container');
    });

    it('auto: runs the pinned image in docker when the program is missing', () => {
      const bin = binDir(dir.path, 'bin', ['docker', 'podman']);
      const decision = decide('SSLYZE', { searchPath: bin });
      expect(decision).to.have.nested.property('launch.program', join(bin, 'docker'));
      expect(decision).to.have.nested.property('launch.container.image', 'nablac0d3/sslyze:6.1.0');
      expect(decision).to.have.nested.property('launch.container.name', 'vigil-scan-scan-1');
    });

    it('auto: uses podman when docker is not there', () => {
      const bin = binDir(dir.path, 'bin', ['podman']);
      expect(decide('NUCLEI', { searchPath: bin })).to.have.nested.property('launch.program', join(bin, 'podman'));
    });

    it('VIGIL_CONTAINER_ENGINE=podman wins over a docker found first', () => {
      const bin = binDir(dir.path, 'bin', ['docker', 'podman']);
      expect(decide('NUCLEI', { searchPath: bin, engine: 'podman' })).to.have.nested.property('launch.program', join(bin, 'podman'));
    });

    it('container: runs the image even when the program is installed', () => {
      const bin = binDir(dir.path, 'bin', ['nmap', 'docker']);
      expect(decide('NMAP', { searchPath: bin, mode: 'container' })).to.have.nested.property('launch.container.image', 'instrumentisto/nmap:7.95');
    });

    it('local: never uses an engine, and says that the setting is why', () => {
      const bin = binDir(dir.path, 'bin', ['docker']);
      const decision = decide('SSLYZE', { searchPath: bin, mode: 'local' });
      expect(decision)
        .to.have.property('missing')
        .that.matches(
          /^sslyze is not installed on this machine \(VIGIL_EMBEDDED_SCANNERS=local allows no containers\); install it \(pip install sslyze==6\.1\.0\), or run Vigil on Kubernetes/,
        );
    });

    const missing: ReadonlyArray<[ScanType, string, RegExp]> = [
      ['NMAP', 'nmap', /install it \(apt-get install nmap\)/],
      ['SSLYZE', 'sslyze', /install it \(pip install sslyze==6\.1\.0\)/],
      ['NUCLEI', 'nuclei', /install it \(go install github\.com\/projectdiscovery\/nuclei\/v3\/cmd\/nuclei@v3\.11\.1/],
      ['OWASP_ZAP', 'zap.sh', /install it \(the ZAP 2\.16\.1 Linux package from zaproxy\.org\/download/],
    ];
    for (const [type, program, hint] of missing) {
      it(`names every way to get ${type}'s scanner when neither it nor an engine is installed`, () => {
        const decision = decide(type, { searchPath: binDir(dir.path, 'empty', []) }) as { missing: string };
        expect(decision.missing).to.match(new RegExp(`^${program.replace('.', '\\.')} is not installed on this machine; `));
        expect(decision.missing).to.match(hint);
        expect(decision.missing).to.include(
          `install docker or podman so that Vigil runs its image ${scannerFor(type).container({ targets: ['https://example.com'], outputDir: '/o' }).image}`,
        );
        expect(decision.missing).to.match(/, or run Vigil on Kubernetes \(VIGIL_RUNTIME=kubernetes\)$/);
      });
    }

    it('container mode without an engine says so', () => {
      const decision = decide('NMAP', { searchPath: binDir(dir.path, 'bin', ['nmap']), mode: 'container' }) as { missing: string };
      expect(decision.missing).to.match(
        /^neither docker nor podman is installed on this machine \(VIGIL_EMBEDDED_SCANNERS=container\) to run nmap; install docker or podman/,
      );
      expect(decision.missing).not.to.include('apt-get');
    });

    it("OPENVAS runs Vigil's own CLI with this Node.js whatever the mode", () => {
      for (const mode of ['auto', 'local', 'container'] as const) {
        const decision = decide('OPENVAS', { searchPath: '', mode });
        expect(decision).to.have.nested.property('launch.program', process.execPath);
        expect(decision).not.to.have.nested.property('launch.container');
      }
    });
  });

  describe('containerRunArgs', () => {
    const input = { targets: ['example.com'], outputDir: '/data/work/s1' };
    const args = (type: ScanType, user = { uid: 1000, gid: 1000 }) =>
      containerRunArgs({ name: 'vigil-scan-s1', type, container: scannerFor(type).container(input), workDir: '/data/work/s1', user });

    it('confines an NMAP container: removed when done, host network, read-only, no capabilities, no escalation, the work dir at the same path', () => {
      expect(args('NMAP')).to.deep.equal([
        'run',
        '--rm',
        '--name',
        'vigil-scan-s1',
        '--network',
        'host',
        '--read-only',
        '--tmpfs',
        '/tmp:rw,nosuid,nodev,size=512m',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        '--user',
        '1000:1000',
        '--env',
        'HOME=/tmp',
        '--volume',
        '/data/work/s1:/data/work/s1',
        '--workdir',
        '/data/work/s1',
        '--entrypoint',
        'nmap',
        'instrumentisto/nmap:7.95',
        ...scannerFor('NMAP').container(input).args,
      ]);
    });

    it('gives NMAP_UDP NET_RAW and nothing else', () => {
      const udp = args('NMAP_UDP', { uid: 0, gid: 0 });
      expect(udp.filter((arg, i) => udp[i - 1] === '--cap-add')).to.deep.equal(['NET_RAW']);
      expect(udp).to.include.members(['--cap-drop', 'ALL']);
    });

    it('keeps the image entrypoint when the definition names no command (sslyze)', () => {
      const sslyze = args('SSLYZE');
      const scannerArgs = scannerFor('SSLYZE').container(input).args;
      expect(sslyze).not.to.include('--entrypoint');
      expect(sslyze.slice(-scannerArgs.length - 1)).to.deep.equal(['nablac0d3/sslyze:6.1.0', ...scannerArgs]);
    });

    it('points Java at /tmp for ZAP, whose image user has a home on the read-only root', () => {
      const zapArgs = containerRunArgs({
        name: 'n',
        type: 'OWASP_ZAP',
        container: scannerFor('OWASP_ZAP').container({ targets: ['https://example.com'], outputDir: '/w' }),
        workDir: '/w',
        user: { uid: 1, gid: 1 },
      });
      expect(zapArgs).to.include('JAVA_TOOL_OPTIONS=-Duser.home=/tmp');
    });
  });

  describe("the definition's own environment in a container", () => {
    const pinned = { targets: ['https://shop.example.com'], addresses: { 'shop.example.com': ['93.184.216.34'] }, outputDir: '/w' };
    const envOf = (type: ScanType) => {
      const args = containerRunArgs({ name: 'n', type, container: scannerFor(type).container(pinned), workDir: '/w', user: { uid: 1, gid: 1 } });
      return args.filter((_, i) => args[i - 1] === '--env');
    };
    it("joins ZAP's hosts file option to the home directory's in one JAVA_TOOL_OPTIONS, as the Jobs do", () => {
      expect(envOf('OWASP_ZAP').filter((variable) => variable.startsWith('JAVA_TOOL_OPTIONS='))).to.deep.equal([
        'JAVA_TOOL_OPTIONS=-Duser.home=/tmp -Djdk.net.hosts.file=/w/zap-hosts',
      ]);
    });
    it('passes nuclei its hosts file, so the checked address is the one it reaches', () => {
      expect(envOf('NUCLEI').some((variable) => /^HOSTS_PATH=\/w\//.test(variable))).to.equal(true);
    });
  });

  describe('containerUser', () => {
    const plain = scannerFor('NMAP').container({ targets: ['example.com'], outputDir: '/o' });
    const udp = scannerFor('NMAP_UDP').container({ targets: ['example.com'], outputDir: '/o' });
    it("is the service's own user when it is not root", () => expect(containerUser(plain, 1000, 1001)).to.deep.equal({ uid: 1000, gid: 1001 }));
    it('is 65532 when the service runs as root', () => expect(containerUser(plain, 0, 0)).to.deep.equal({ uid: 65532, gid: 65532 }));
    it('is root for a scanner that needs a capability, as in Kubernetes', () => expect(containerUser(udp, 1000, 1000)).to.deep.equal({ uid: 0, gid: 0 }));
  });
});
