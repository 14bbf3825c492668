/**
 * A stand-in `docker` for machines without a container engine: a directory
 * holding one executable named `docker` that checks the confinement Vigil
 * asks for (refusing with exit code 125, as docker does for a bad option),
 * records each call, and then runs the scanner's program from this machine
 * in place of the image. `held` makes it wait for a signal first, so that a
 * test can stop a scan while its "container" runs.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StandInDocker {
  /** The directory to use as the search path (it holds only `docker`). */
  binDir: string;
  /** Every call's arguments, in order. */
  calls(): string[][];
  /** While held, `run` waits for SIGTERM before starting the scanner. */
  hold(held: boolean): void;
}

const SCRIPT = (state: string, programs: Record<string, string>) => `#!${process.execPath}
const { appendFileSync, existsSync } = require('node:fs');
const { spawn } = require('node:child_process');
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(join(state, 'calls.jsonl'))}, JSON.stringify(args) + '\\n');
const refuse = (why) => { process.stderr.write('docker: ' + why + '\\n'); process.exit(125); };
if (args[0] === 'rm') process.exit(0);
if (args[0] !== 'run') refuse('unexpected command ' + args[0]);
const value = (flag) => { const i = args.indexOf(flag); return i < 0 ? undefined : args[i + 1]; };
for (const flag of ['--rm', '--read-only']) if (!args.includes(flag)) refuse('missing ' + flag);
if (value('--network') !== 'host') refuse('expected --network host');
if (value('--cap-drop') !== 'ALL') refuse('expected --cap-drop ALL');
if (value('--security-opt') !== 'no-new-privileges') refuse('expected no-new-privileges');
const user = value('--user') ?? '';
if (user.startsWith('0:') && !args.includes('--cap-add')) refuse('root without a capability that needs it');
const [hostDir, inside] = (value('--volume') ?? '').split(':');
if (!hostDir || hostDir !== inside) refuse('the work directory must be mounted at the same path');
const programs = ${JSON.stringify(programs)};
const imageAt = args.findIndex((arg) => arg in programs);
if (imageAt < 0) refuse('no pinned image among the arguments');
const entrypoint = value('--entrypoint');
const program = programs[args[imageAt]];
if (entrypoint !== undefined && !program.endsWith('/' + entrypoint)) refuse('entrypoint ' + entrypoint + ' does not fit ' + args[imageAt]);
const start = () => {
  const child = spawn(program, args.slice(imageAt + 1), { cwd: value('--workdir'), stdio: 'inherit' });
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 143 : 1)));
};
if (existsSync(${JSON.stringify(join(state, 'held'))})) {
  process.on('SIGTERM', () => process.exit(143));
  setInterval(() => undefined, 1000);
} else start();
`;

/** `programs` maps pinned image names to the local programs that stand in for them. */
export function standInDocker(root: string, programs: Record<string, string>): StandInDocker {
  const binDir = join(root, 'stand-in-bin');
  const state = join(root, 'stand-in-state');
  mkdirSync(binDir, { recursive: true });
  mkdirSync(state, { recursive: true });
  writeFileSync(join(binDir, 'docker'), SCRIPT(state, programs));
  chmodSync(join(binDir, 'docker'), 0o755);
  const callsFile = join(state, 'calls.jsonl');
  return {
    binDir,
    calls: () =>
      existsSync(callsFile)
        ? readFileSync(callsFile, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as string[])
        : [],
    hold(held) {
      if (held) writeFileSync(join(state, 'held'), '');
      else rmSync(join(state, 'held'), { force: true });
    },
  };
}
