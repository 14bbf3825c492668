/**
 * How the embedded runtime starts one scanner: its local program when that is
 * installed, else its pinned image (the same image the Kubernetes Jobs run)
 * in docker or podman, else nothing, with a sentence naming every way to get
 * it. Only `findProgram` touches the file system; the rest is pure.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ContainerEngine, EmbeddedScanners } from '../../config/settings.js';
import type { LocalCommand, ScannerContainer, ScannerDefinition } from '../../domain/scanners/definition.js';

export interface LaunchOptions {
  mode: EmbeddedScanners;
  /** The engine named in the settings; undefined means docker, else podman, whichever is found. */
  engine: ContainerEngine | undefined;
  searchPath: string;
  /** The user the service runs as: scanners in containers run as that user, or 65532 when it is root. */
  uid: number;
  gid: number;
}

/** A process to spawn; `container` is set when it is a container run, for stopping it and naming it in messages. */
export interface Launch {
  /** The program to spawn, found on the search path. */
  program: string;
  /** The program as the definition names it, for messages. */
  name: string;
  args: string[];
  /** A local program's variables on top of the service's environment (a container gets its own as run arguments). */
  env?: Record<string, string>;
  /** A local program's content version file (LocalCommand.contentVersion). */
  contentVersion?: { name: string; file: string };
  container?: { engine: string; name: string; image: string; user: ContainerUser };
}

export type LaunchDecision = { launch: Launch } | { missing: string };

export interface ContainerUser {
  uid: number;
  gid: number;
}

/** The distroless "nonroot" user the Kubernetes Jobs use too (job-manifest.ts SCANNER_USER). */
export const CONTAINER_USER = 65532;
const TMP_SIZE = '512m';

/** The absolute path of an executable file named `program` on the search path, or undefined. */
export function findProgram(program: string, searchPath: string): string | undefined {
  const candidates = isAbsolute(program)
    ? [program]
    : searchPath
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, program));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

function findEngine(options: LaunchOptions): string | undefined {
  const engines: ContainerEngine[] = options.engine === undefined ? ['docker', 'podman'] : [options.engine];
  for (const engine of engines) {
    const path = findProgram(engine, options.searchPath);
    if (path !== undefined) return path;
  }
  return undefined;
}

/**
 * Who runs inside the container: the service's own user, so that the files
 * in the mounted work directory stay the service's; 65532 when the service is
 * root. A scanner that needs a capability (NMAP_UDP: NET_RAW) runs as root,
 * as in Kubernetes: capabilities given to another user never become
 * effective under no-new-privileges.
 */
export function containerUser(container: ScannerContainer, uid: number, gid: number): ContainerUser {
  if ((container.capabilities ?? []).length > 0) return { uid: 0, gid: 0 };
  return uid === 0 ? { uid: CONTAINER_USER, gid: CONTAINER_USER } : { uid, gid };
}

/**
 * Environment the images need with a read-only root filesystem, then the
 * definition's own (nuclei's HOSTS_PATH, ZAP's hosts file), as job-manifest.ts
 * scannerEnv builds it: ZAP's JAVA_TOOL_OPTIONS joins the home directory's.
 */
function containerEnv(type: ScannerDefinition['type'], own: Readonly<Record<string, string>> = {}): string[] {
  const { JAVA_TOOL_OPTIONS: javaOptions, ...rest } = own;
  const env = ['HOME=/tmp'];
  if (type === 'OWASP_ZAP' || type === 'OWASP_ZAP_ACTIVE')
    env.push(`JAVA_TOOL_OPTIONS=${['-Duser.home=/tmp', ...(javaOptions === undefined ? [] : [javaOptions])].join(' ')}`);
  return [...env, ...Object.entries(rest).map(([name, value]) => `${name}=${value}`)];
}

/**
 * `run` arguments for docker and podman alike: removed when done, named for
 * `rm -f` on stop, host networking (the addresses Vigil vetted are the ones
 * the scanner reaches, as for a local program), a read-only root filesystem
 * with a private /tmp, every capability dropped but what the scanner asks
 * for, no privilege escalation, and the work directory mounted at the same
 * path, so the arguments the definition wrote for it hold inside too.
 */
export function containerRunArgs(input: {
  name: string;
  type: ScannerDefinition['type'];
  container: ScannerContainer;
  workDir: string;
  user: ContainerUser;
}): string[] {
  const { container, workDir, user } = input;
  const [entrypoint, ...commandArgs] = container.command ?? [];
  return [
    'run',
    '--rm',
    '--name',
    input.name,
    '--network',
    'host',
    '--read-only',
    '--tmpfs',
    `/tmp:rw,nosuid,nodev,size=${TMP_SIZE}`,
    '--cap-drop',
    'ALL',
    ...(container.capabilities ?? []).flatMap((capability) => ['--cap-add', capability]),
    '--security-opt',
    'no-new-privileges',
    '--user',
    `${user.uid}:${user.gid}`,
    ...containerEnv(input.type, container.env).flatMap((variable) => ['--env', variable]),
    '--volume',
    `${workDir}:${workDir}`,
    '--workdir',
    workDir,
    ...(entrypoint === undefined ? [] : ['--entrypoint', entrypoint]),
    container.image,
    ...commandArgs,
    ...container.args,
  ];
}

function missingMessage(definition: ScannerDefinition, program: string, mode: EmbeddedScanners, image: string): string {
  const ways = [
    ...(mode !== 'container' && definition.installHint !== undefined ? [`install it (${definition.installHint})`] : []),
    ...(mode !== 'local' ? [`install docker or podman so that Vigil runs its image ${image}`] : []),
    'run Vigil on Kubernetes (VIGIL_RUNTIME=kubernetes)',
  ];
  const what =
    mode === 'container'
      ? `neither docker nor podman is installed on this machine (VIGIL_EMBEDDED_SCANNERS=container) to run ${program}`
      : `${program} is not installed on this machine`;
  const modeHint = mode === 'local' ? ' (VIGIL_EMBEDDED_SCANNERS=local allows no containers)' : '';
  return `${what}${modeHint}; ${ways.length === 1 ? ways[0] : `${ways.slice(0, -1).join(', ')}, or ${ways.at(-1)}`}`;
}

/** What docker and podman print when their daemon or socket is not there to talk to. */
const ENGINE_UNREACHABLE =
  /cannot connect to the docker daemon|is the docker daemon running|cannot connect to podman|docker\.sock.*(no such file|connection refused|permission denied)|podman\.sock/i;

/**
 * The hint for a container engine that failed before the scanner ran: when
 * the engine itself is unreachable (a docker client without its daemon),
 * how to start it, or how to do without it.
 */
export function engineFailureHint(engine: string, stderr: string, definition: ScannerDefinition): string {
  if (!ENGINE_UNREACHABLE.test(stderr)) return '';
  const start =
    engine === 'podman' ? 'start the podman socket (systemctl --user start podman.socket)' : 'start the docker daemon (sudo systemctl start docker)';
  const local = definition.installHint === undefined ? '' : `, install the scanner locally (${definition.installHint}) and set VIGIL_EMBEDDED_SCANNERS=local`;
  return `; ${engine} is installed but its daemon is not reachable: ${start}${local}, or run Vigil on Kubernetes (VIGIL_RUNTIME=kubernetes)`;
}

/**
 * Chooses how to run a scanner. Types Vigil runs itself (OPENVAS, NESSUS run
 * Vigil's own CLI with this Node.js) are always local.
 */
export function decideLaunch(input: {
  definition: ScannerDefinition;
  local: LocalCommand;
  container: ScannerContainer;
  scanId: string;
  workDir: string;
  options: LaunchOptions;
}): LaunchDecision {
  const { definition, local, container, options } = input;
  const ownCli = definition.installHint === undefined;
  const localPath = options.mode === 'container' && !ownCli ? undefined : findProgram(local.program, options.searchPath);
  const asLocal = (program: string): Launch => ({
    program,
    name: local.program,
    args: local.args,
    ...(local.env === undefined ? {} : { env: local.env }),
    ...(local.contentVersion === undefined ? {} : { contentVersion: local.contentVersion }),
  });
  if (localPath !== undefined) return { launch: asLocal(localPath) };
  if (ownCli) return { launch: asLocal(local.program) };
  const engine = options.mode === 'local' ? undefined : findEngine(options);
  if (engine === undefined) return { missing: missingMessage(definition, local.program, options.mode, container.image) };
  const name = `vigil-scan-${input.scanId}`;
  const user = containerUser(container, options.uid, options.gid);
  return {
    launch: {
      program: engine,
      name: container.image,
      args: containerRunArgs({ name, type: definition.type, container, workDir: input.workDir, user }),
      container: { engine, name, image: container.image, user },
    },
  };
}
