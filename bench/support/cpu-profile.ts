/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per
 * function, and inclusive time per function (time with it on the stack).
 *
 * Usage: npx tsx bench/support/cpu-profile.ts <file.cpuprofile> [rows]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionTime {
  name: string;
  selfMs: number;
  totalMs: number;
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/work\/main\//, '');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

/** Self and inclusive milliseconds per function, largest self time first. */
export function summariseProfile(path: string): { totalMs: number; functions: FunctionTime[] } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index + 1] ?? 0) / 1000;
    const node = byId.get(id)!;
    self.set(label(node), (self.get(label(node)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const name = label(byId.get(current)!);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + ms);
    }
  });
  const functions = [...total.entries()].map(([name, totalMs]) => ({ name, selfMs: self.get(name) ?? 0, totalMs }));
  return { totalMs: (profile.endTime - profile.startTime) / 1000, functions };
}

export function formatProfile(path: string, rows = 25): string {
  const { totalMs, functions } = summariseProfile(path);
  const line = (f: FunctionTime) =>
    `${f.selfMs.toFixed(0).padStart(8)} ${((100 * f.selfMs) / totalMs).toFixed(1).padStart(5)}% ${f.totalMs.toFixed(0).padStart(8)} ${((100 * f.totalMs) / totalMs).toFixed(1).padStart(5)}%  ${f.name}`;
  const header = `${'self ms'.padStart(8)} ${'self'.padStart(6)} ${'incl ms'.padStart(8)} ${'incl'.padStart(6)}  function`;
  const bySelf = [...functions].sort((a, b) => b.selfMs - a.selfMs).slice(0, rows);
  const byTotal = [...functions].sort((a, b) => b.totalMs - a.totalMs).slice(0, rows);
  return [
    `profile ${path}: ${totalMs.toFixed(0)} ms`,
    '',
    'by self time:',
    header,
    ...bySelf.map(line),
    '',
    'by inclusive time:',
    header,
    ...byTotal.map(line),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, rows] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write('usage: cpu-profile.ts <file.cpuprofile> [rows]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatProfile(file, rows === undefined ? 25 : Number(rows))}\n`);
}
