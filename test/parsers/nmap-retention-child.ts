/**
 * Run by nmap-golden.test.ts with --expose-gc: streams an nmap report of
 * HOSTS hosts, each written together with a 256 KiB comment (as a file
 * arrives in pieces of that size, each decoded into one string), with a
 * counting sink, and measures the V8 heap after a full collection before
 * the report's last bytes arrive: what the parser keeps until the end (the
 * keys that drop repeats, the host facts) must not keep those pieces alive.
 * Prints one JSON line, in MiB.
 */
import { readFileSync } from 'node:fs';
import { createNmapParser } from '../../src/parsers/nmap.js';

const HOSTS = 80;
const fixture = readFileSync(new URL('../fixtures/nmap/defectdojo-nmap-issue4406.xml', import.meta.url), 'utf8');
const host = fixture.slice(fixture.indexOf('<host '), fixture.indexOf('</host>') + '</host>'.length);
const encoder = new TextEncoder();
const heapMb = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

let findings = 0;
const parser = createNmapParser('NMAP', { add: (batch) => (findings += batch.length) });
const before = heapMb();
parser.write(encoder.encode('<?xml version="1.0"?>\n<nmaprun scanner="nmap">\n'));
for (let n = 1; n <= HOSTS; n++) {
  const block = host
    .replace(/addr="10\.250\.195\.71"/g, `addr="45.0.${n >> 8}.${n & 255}"`)
    .replace(/ip-10-250-195-71[^"]*/g, `host-${n}.retention.example.com`);
  parser.write(encoder.encode(`${block}\n<!-- ${'x'.repeat(256 * 1024)} -->\n`));
}
const holding = heapMb();
parser.write(encoder.encode('</nmaprun>\n'));
findings += parser.end().findings.length;
console.log(JSON.stringify({ findings, piecesMb: (HOSTS * 256) / 1024, holdingMb: holding - before }));
