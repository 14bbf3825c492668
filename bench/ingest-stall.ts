/**
 * Benchmark (issue 16, item 1): does one large upload stall the service?
 * Generates an nmap XML of BENCH_HOSTS hosts with BENCH_PORTS open ports
 * each (default 1,000 × 408, about 25 MB, the attack's file), starts a real
 * `vigil serve` child, uploads the file through POST /v1/results and samples
 * GET /healthz every 50 ms meanwhile. Prints the upload's status and time,
 * /healthz latencies, the server's peak memory (VmHWM) and the database
 * growth. Asserts nothing.
 *
 *   npx tsx bench/ingest-stall.ts
 *   BENCH_HOSTS=65536 BENCH_PORTS=3 npx tsx bench/ingest-stall.ts   (a /16)
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInteger } from './support/env.js';
import { percentile } from './support/load.js';
import { cleanup, freePort, runBenchmark, startChild, tempDirectory, waitForHttp } from './support/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'bench-ingest-stall-key';
const hosts = envInteger('BENCH_HOSTS', 1000, 1);
const ports = envInteger('BENCH_PORTS', 408, 0);

/** A public-looking address for host n, outside every special-purpose range. */
function addressOf(n: number): string {
  return `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

function buildNmap(): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap -sT" version="7.93">\n'];
  for (let host = 0; host < hosts; host++) {
    parts.push(`<host><status state="up"/><address addr="${addressOf(host + 1)}" addrtype="ipv4"/><ports>\n`);
    for (let port = 1; port <= ports; port++) {
      parts.push(`<port protocol="tcp" portid="${port}"><state state="open"/></port>\n`);
    }
    parts.push('</ports></host>\n');
  }
  parts.push('</nmaprun>\n');
  return parts.join('');
}

function peakMemoryMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

function databaseBytes(dataDir: string): number {
  return ['vigil.db', 'vigil.db-wal']
    .map((name) => join(dataDir, name))
    .filter(existsSync)
    .reduce((sum, file) => sum + statSync(file).size, 0);
}

async function api(base: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, { ...init, headers: { 'X-SERVICE-API-KEY': KEY, ...(init.headers ?? {}) } });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

function uploadWithCurl(base: string, sourceId: string, file: string): Promise<{ status: number; body: any }> {
  const args = [
    '-s',
    '-o',
    '-',
    '-w',
    '\n%{http_code}',
    '-H',
    `X-SERVICE-API-KEY: ${KEY}`,
    '-F',
    `source_id=${sourceId}`,
    '-F',
    'scan_type=NMAP',
    '-F',
    `file=@${file}`,
    `${base}/v1/results`,
  ];
  return new Promise((resolve, reject) => {
    execFile('curl', args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(error);
      const newline = stdout.lastIndexOf('\n');
      const text = stdout.slice(0, newline);
      resolve({ status: Number(stdout.slice(newline + 1)), body: text.startsWith('{') ? JSON.parse(text) : text });
    });
  });
}

/** Samples /healthz until `done` resolves; returns each answer's latency in ms. */
async function sampleHealth(base: string, done: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const started = performance.now();
    try {
      await (await fetch(`${base}/healthz`)).arrayBuffer();
    } catch (error) {
      process.stderr.write(`/healthz failed: ${(error as Error).cause ?? error}\n`);
    }
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return latencies;
}

async function main(): Promise<void> {
  const dir = tempDirectory('vigil-ingest-stall-');
  const dataDir = join(dir, 'data');
  const file = join(dir, 'scan.xml');
  writeFileSync(file, buildNmap());
  const size = statSync(file).size;
  const port = await freePort();
  const env = { ...process.env, VIGIL_DATA_DIR: dataDir, VIGIL_PORT: String(port), VIGIL_BOOTSTRAP_API_KEY: KEY, LOG_LEVEL: 'warn' };
  const server = startChild('vigil serve', process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'serve'], env, ROOT);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(server, `${base}/healthz`);
  const source = await api(base, '/v1/sources', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ source_type: 'IMPORTED', name: 'bench' }),
  });
  const memoryBefore = peakMemoryMiB(server.process.pid!);
  const dbBefore = databaseBytes(dataDir);
  const started = performance.now();
  // curl in its own process sends the file, so the samples below time the server alone.
  const upload = uploadWithCurl(base, source.body.data.id, file);
  const latencies = await sampleHealth(base, upload);
  const result = await upload;
  const elapsed = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const summary =
    typeof result.body === 'object' ? JSON.stringify(result.body.data?.risks ?? result.body.error).slice(0, 200) : String(result.body).slice(0, 200);
  process.stdout.write(
    [
      `file: ${hosts} hosts × ${ports} open ports = ${hosts * ports} findings, ${(size / 1024 / 1024).toFixed(1)} MiB`,
      `upload: HTTP ${result.status} after ${elapsed.toFixed(1)} s: ${summary}`,
      `/healthz during upload: ${sorted.length} samples, p50 ${percentile(sorted, 0.5).toFixed(0)} ms, p99 ${percentile(sorted, 0.99).toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`,
      `server peak memory (VmHWM): ${memoryBefore.toFixed(0)} MiB before, ${peakMemoryMiB(server.process.pid!).toFixed(0)} MiB after`,
      `database growth: ${((databaseBytes(dataDir) - dbBefore) / 1024 / 1024).toFixed(1)} MiB`,
      '',
    ].join('\n'),
  );
}

runBenchmark(main, cleanup, 600);
