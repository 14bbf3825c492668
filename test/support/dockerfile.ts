/**
 * The Dockerfile read as text (no Docker daemon runs here): its instructions
 * with continuation lines joined and comments dropped, and the environment
 * its final stage sets. Used by test/chart/dockerfile.test.ts and by
 * bench/operator.ts, which runs `vigil serve` with the image's NODE_OPTIONS.
 */
import { readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);

export function dockerfileLines(): string[] {
  return readFileSync(new URL('Dockerfile', ROOT), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The arguments of every instruction `name` (ENV, RUN, COPY...), in order. */
export function instructions(name: string, lines = dockerfileLines()): string[] {
  return lines.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
}

/** The variables the final (`AS runtime`) stage's ENV instructions set, in the `KEY=value` form (unquoted values). */
export function runtimeEnv(): Record<string, string> {
  const lines = dockerfileLines();
  const runtime = lines.slice(lines.findIndex((line) => line.endsWith('AS runtime')));
  const env: Record<string, string> = {};
  for (const args of instructions('ENV', runtime)) for (const [, key, value] of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S*)/g)) env[key!] = value!;
  return env;
}
