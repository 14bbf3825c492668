/**
 * Benchmark (issue 15): how long a recorded login takes to replay in the
 * confined browser (Chromium start included, the demo shop of the tests on
 * loopback), and how long checking the largest API definition an upload may
 * carry (1 MiB of OpenAPI 3.0 YAML, internal $refs) takes in its worker
 * thread, with the memory it costs and the longest the event loop waited
 * meanwhile. Under tsx the worker also loads tsx, so the compiled service
 * starts it faster. Prints figures; asserts nothing.
 *
 *   npx tsx bench/login-replay.ts      (make bench runs it)
 *   BENCH_LOGIN_RUNS=5
 */
import { readFileSync } from 'node:fs';
import { checkApiDefinition } from '../src/app/api-definition-check.js';
import { parseCidrList } from '../src/domain/targets/ipv4.js';
import { parseLoginRecording } from '../src/domain/targets/login-recording.js';
import { systemResolver } from '../src/runtime/dns-resolver.js';
import { BrowserLoginReplayer } from '../src/runtime/login-replay/browser-login.js';
import { LoginApp } from '../test/support/login-app.js';
import { envInteger } from './support/env.js';

const runs = envInteger('BENCH_LOGIN_RUNS', 5, 1);

function summary(label: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`${label}: ${samples.length} runs, min ${sorted[0]!.toFixed(0)} ms, median ${median.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`);
}

async function replays(): Promise<void> {
  const app = await LoginApp.start();
  const project = JSON.parse(readFileSync(new URL('../test/fixtures/selenium/demo-login.side', import.meta.url), 'utf8'));
  project.url = app.url;
  const recording = parseLoginRecording('demo-login.side', Buffer.from(JSON.stringify(project)));
  const replayer = new BrowserLoginReplayer({ chromiumPath: '/usr/bin/chromium', allowTargets: parseCidrList('127.0.0.1/32'), resolver: systemResolver });
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const outcome = await replayer.replay(recording, `${app.url}/`);
    samples.push(performance.now() - started);
    if (!outcome.ok) console.log(`run ${run + 1} failed: ${outcome.message}`);
  }
  await app.stop();
  summary('login replay (9 commands, browser start to session)', samples);
}

/** An OpenAPI 3.0 YAML document of about `bytes`, every operation referring to shared schemas. */
function largeDefinition(bytes: number): Buffer {
  const head =
    'openapi: 3.0.3\ninfo:\n  title: large\n  version: 1.0.0\ncomponents:\n  schemas:\n    Item:\n      type: object\n      properties:\n        id:\n          type: integer\n        name:\n          type: string\npaths:\n';
  const parts = [head];
  let size = head.length;
  for (let index = 0; size < bytes - 400; index++) {
    const path = `  /items${index}/{id}:\n    get:\n      operationId: getItem${index}\n      parameters:\n        - name: id\n          in: path\n          required: true\n          schema:\n            type: integer\n      responses:\n        '200':\n          description: An item\n          content:\n            application/json:\n              schema:\n                $ref: '#/components/schemas/Item'\n`;
    parts.push(path);
    size += path.length;
  }
  return Buffer.from(parts.join(''));
}

async function definitions(): Promise<void> {
  const file = largeDefinition(1024 * 1024 - 1);
  const samples: number[] = [];
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  let lastTick = performance.now();
  let longestGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - lastTick);
    lastTick = now;
  }, 10);
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await checkApiDefinition('large.yaml', file);
    samples.push(performance.now() - started);
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  clearInterval(ticker);
  const operations = (file.toString().match(/operationId/g) ?? []).length;
  summary(`API definition check (${(file.length / 1024).toFixed(0)} KiB YAML, ${operations} operations)`, samples);
  console.log(
    `API definition check: RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(peak / 2 ** 20).toFixed(0)} MiB at most (the check runs in a worker thread); the service's event loop went at most ${longestGap.toFixed(0)} ms without a turn (10 ms timer)`,
  );
}

await replays();
await definitions();
