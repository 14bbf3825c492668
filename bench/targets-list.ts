/**
 * Benchmark: `GET /v1/targets` in pages of 500 from an account with 100,000
 * targets, side by side with a bare express handler that serializes the same
 * 500 objects from memory. Prints requests per second, p50/p99 latency and
 * the ratio; the aims (issue 17) are at least half the bare handler's
 * throughput and a p99 at most twice bare's. Speed is printed, never
 * asserted; only wrong answers (non-2xx, bad pages) fail.
 *
 * Where the time went (BENCH_PROFILE=1, Vigil's process, 100k targets):
 *   before: the SQLite read of 13 columns per row into JS values ~0.9 ms a
 *     page, renderTargetJson turning them back into JSON text ~0.3 ms,
 *     sendJsonList's join + byteLength + string write ~0.3 ms, writev ~0.35
 *     ms, express/openapi-backend routing and auth the rest.
 *   after: SQLite renders each row's JSON text itself (TARGET_JSON_SQL,
 *     json_quote) and joins the page in order into one BLOB (group_concat
 *     ... ORDER BY the sort keys), read with a narrow keys query in one
 *     transaction; JS frames the bytes and writes them, with no string per
 *     row, no join and no re-encoding. Read + render + encode of a page went
 *     from ~1.1-1.5 ms to ~0.9-1.0 ms in isolation; of that ~0.4 ms is
 *     SQLite's own row lookups (one B-tree seek per row from the
 *     (account_id, seq) index). Ratio 0.37-0.48 before, 0.54-0.60 after.
 *   issue 17, second pass: openapi-backend rebuilt its list of operations
 *     (lodash chains over the whole document) for every request it routed,
 *     ~0.35 ms of the ~1.4 ms a page cost; it is now built once at start
 *     (src/http/api-router.ts), and routing is ~0.002 ms. After, Vigil's
 *     busy time per page (BENCH_PROFILE=1): SQLite's read and render ~55%
 *     (~0.5 ms a page alone on a quiet machine: json_quote and the
 *     ordered group_concat of 500 rows; concat() instead of || is no
 *     faster), the socket write of the 242 KiB ~9% (bare pays it too), GC
 *     ~6%, express and the HTTP parser most of the rest. What is left of
 *     the tail is the SQLite render; a cache of rendered pages would beat
 *     the benchmark without making Vigil faster where it has writes, and
 *     is not done.
 *   issue 17, third pass (the p99 aim was met in 3 of 4 runs, 1.51-2.02x):
 *     where the tail came from, measured with a preloaded probe in both
 *     servers (GC events from perf_hooks, each request's time in the server)
 *     and V8's sampling heap profiler including collected objects: Vigil's
 *     server time per page p50 1.33 ms, p99 6.1 ms (bare 0.93 / 4.7); 100
 *     scavenges over 7,361 requests, 3.8 ms each on average, up to 25 ms
 *     (bare: 1.9 ms, up to 7 ms), and 7 mark-compacts up to 23 ms; none of
 *     the slowest 1% of requests overlapped a mark-compact. So not a page
 *     cache miss or a full GC, but plain work per page and the young garbage
 *     it made: 58% of all the JS allocation of a list request was the keys
 *     query (501 one-element row arrays a page, read only for the cursor),
 *     and SQLite's share of the busy time (~55%) was mostly the rendering
 *     and a sort: group_concat(j ORDER BY ...) copies all 242 KiB of
 *     rendered rows into a sorter to order rows that the ordered, limited
 *     subquery already yields in order. In one process on 100,000 targets
 *     (the machine loaded, so ranges): the keys of 501 rows 0.22-0.28 ms
 *     against 0.02-0.06 ms for the keys of the page's last row and the next
 *     (LIMIT 2 OFFSET page_size - 1); a page's JSON with the aggregate's
 *     ORDER BY about 1 ms more than without it.
 *   Changed: (1) the rows are joined in the subquery's order (SQLite keeps
 *     the ORDER BY of a FROM-clause subquery that has a LIMIT, and its
 *     co-routine yields the rows in that order; test/http/presenters.test.ts
 *     walks every sort over many pages) and the cursor comes from LIMIT 2
 *     OFFSET; (2) migration 0017 indexes TARGET_JSON_SQL itself beside
 *     (account_id, seq): SQLite (3.41+) reads an indexed expression from the
 *     index instead of computing it, so a page in created_at order is read
 *     from that index alone: 0.26-0.40 ms a page against 0.66-0.82 ms (same
 *     process, alternating). The cost is on writes and disk: ~600 bytes more
 *     per target (the seed's 100,000 inserts took 3.8 s instead of 1.9 s);
 *     the other sorts compute the JSON per row as before.
 *   After (1): server time p50 0.85 ms, p99 3.0 ms; 111 scavenges over
 *     12,837 requests; the store's share of JS allocation 3.5% (express,
 *     router, openapi-backend and pino per request are the rest, common to
 *     every endpoint); three runs of the benchmark (load average 7.4-12):
 *     0.84-0.89x bare, p99 1.19-1.61x. After (1) and (2), six runs at load
 *     average 6.3-12: 666-1,912 req/s against bare's 526-1,064, 1.07-1.88x;
 *     p99 12-102 ms against 22-93 ms, 0.28-1.09x (before this pass:
 *     0.51-0.71x, p99 1.51-2.02x). Vigil now does less per page than bare express, which
 *     runs JSON.stringify over the 500 objects for every request.
 *
 * The servers run in child processes, the load generator (autocannon) here.
 *
 * Environment:
 *   BENCH_DURATION     measured seconds per server (default 10)
 *   BENCH_ROUNDS       the measured time is split into this many alternating
 *                      vigil/bare runs, so that background load drifting during
 *                      the run hits both sides alike (default 2)
 *   BENCH_WARMUP       warm-up seconds per server, not measured (default 2)
 *   BENCH_CONNECTIONS  concurrent connections (default 10)
 *   BENCH_TARGETS      targets to seed (default 100000)
 *   BENCH_LOG_LEVEL    LOG_LEVEL of the Vigil process (default warn)
 *   BENCH_VIGIL_MAIN   a compiled cli/main.js to run instead of the automatic choice
 *                      (dist/src/cli/main.js when newer than src/, else tsx)
 *   BENCH_PROFILE      set to 1 (or a directory to keep the file in) to run Vigil
 *                      with --cpu-prof and print where its CPU time went
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatProfile } from './support/cpu-profile.js';
import { assertClean, combine, formatTable, runLoad, type LoadOptions, type LoadSample } from './support/load.js';
import { envInteger } from './support/env.js';
import { cleanup, freePort, newestMtime, runBenchmark, startChild, tempDirectory, waitForHttp, type Child } from './support/processes.js';
import { hostName, seedTargets } from './support/seed.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PAGE_SIZE = 500;
const API_KEY_HEADER = 'X-SERVICE-API-KEY';

const config = {
  duration: envInteger('BENCH_DURATION', 10, 1),
  rounds: envInteger('BENCH_ROUNDS', 2, 1),
  warmup: envInteger('BENCH_WARMUP', 2, 0),
  connections: envInteger('BENCH_CONNECTIONS', 10, 1),
  targets: envInteger('BENCH_TARGETS', 100_000, 1),
  logLevel: process.env.BENCH_LOG_LEVEL?.trim() || 'warn',
  profile: process.env.BENCH_PROFILE?.trim() || undefined,
};

const log = (line = '') => process.stdout.write(`${line}\n`);

/** The compiled CLI when it is at least as new as every source file; otherwise the sources through tsx. */
function vigilCommand(): { args: string[]; description: string } {
  const given = process.env.BENCH_VIGIL_MAIN?.trim();
  if (given) return { args: [resolve(given), 'serve'], description: `${given} (BENCH_VIGIL_MAIN)` };
  const dist = join(ROOT, 'dist/src/cli/main.js');
  if (existsSync(dist) && statSync(dist).mtimeMs >= newestMtime(join(ROOT, 'src'))) {
    return { args: [dist, 'serve'], description: 'dist/src/cli/main.js (compiled)' };
  }
  const why = existsSync(dist) ? 'dist/ is older than src/' : 'no dist/';
  return {
    args: ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'serve'],
    description: `src/cli/main.ts through tsx (${why}; run make build for the compiled one)`,
  };
}

/** The inherited environment without any VIGIL_ setting, so that only the benchmark's apply. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('VIGIL_') && key !== 'LOG_LEVEL') env[key] = value;
  return { ...env, ...extra };
}

interface TargetJson {
  id: string;
  target: string;
  created_at: string;
  [field: string]: unknown;
}

interface Walk {
  paths: string[];
  firstPage: TargetJson[];
  pageBytes: number;
  ms: number;
}

function listPath(token: string | undefined): string {
  return `/v1/targets?page_size=${PAGE_SIZE}${token === undefined ? '' : `&page_token=${encodeURIComponent(token)}`}`;
}

/** Reads every page once, checks the list is complete and newest first, and returns the path of every page. */
async function walkPages(baseUrl: string, apiKey: string, expected: number): Promise<Walk> {
  const started = performance.now();
  const paths: string[] = [];
  const ids = new Set<string>();
  let firstPage: TargetJson[] = [];
  let pageBytes = 0;
  let previous: TargetJson | undefined;
  let token: string | undefined;
  do {
    const path = listPath(token);
    const response = await fetch(baseUrl + path, { headers: { [API_KEY_HEADER]: apiKey } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as { data: TargetJson[]; next_page_token?: string };
    paths.push(path);
    if (paths.length === 1) {
      firstPage = body.data;
      pageBytes = Buffer.byteLength(text);
    }
    for (const item of body.data) {
      if (ids.has(item.id)) throw new Error(`page ${paths.length}: target ${item.id} was already on an earlier page`);
      ids.add(item.id);
      if (previous !== undefined && !(item.created_at < previous.created_at)) {
        throw new Error(
          `page ${paths.length}: ${item.target} (${item.created_at}) follows ${previous.target} (${previous.created_at}); the list is not newest first`,
        );
      }
      previous = item;
    }
    token = body.next_page_token;
    const fullPage = body.data.length === PAGE_SIZE;
    if (token !== undefined && !fullPage) throw new Error(`page ${paths.length} has ${body.data.length} targets but a next_page_token`);
    if (paths.length > Math.ceil(expected / PAGE_SIZE) + 1) throw new Error(`more than ${Math.ceil(expected / PAGE_SIZE)} pages: the tokens do not end`);
  } while (token !== undefined);
  const pages = Math.ceil(expected / PAGE_SIZE);
  if (paths.length !== pages) throw new Error(`expected ${pages} pages, got ${paths.length}`);
  if (ids.size !== expected) throw new Error(`expected ${expected} distinct targets, got ${ids.size}`);
  if (firstPage[0]?.target !== hostName(expected)) throw new Error(`the first target is ${firstPage[0]?.target}, expected the newest, ${hostName(expected)}`);
  return { paths, firstPage, pageBytes, ms: performance.now() - started };
}

async function startBare(dir: string, objects: readonly unknown[]): Promise<{ child: Child; url: string }> {
  const file = join(dir, 'bare-page.json');
  writeFileSync(file, JSON.stringify(objects));
  const port = await freePort();
  const child = startChild(
    'bare express',
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/support/bare-server.ts'), file, String(port)],
    childEnv({ NODE_ENV: 'production' }),
    ROOT,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${url}/`);
  return { child, url };
}

interface Side {
  name: string;
  options: Omit<LoadOptions, 'durationSeconds'>;
  samples: LoadSample[];
}

/** Warms up each side, then runs the measured rounds alternately. */
async function measure(sides: Side[]): Promise<void> {
  if (config.warmup > 0) {
    for (const side of sides) assertClean(`${side.name} (warm-up)`, await runLoad({ ...side.options, durationSeconds: config.warmup }));
  }
  const seconds = config.duration / config.rounds;
  for (let round = 0; round < config.rounds; round++) {
    for (const side of sides) {
      const sample = await runLoad({ ...side.options, durationSeconds: seconds });
      assertClean(side.name, sample);
      side.samples.push(sample);
    }
  }
}

async function main(): Promise<void> {
  const cpuList = cpus();
  log('Targets list benchmark: GET /v1/targets, pages of 500');
  log(
    `machine: node ${process.version}, ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? 'unknown model'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform}/${process.arch}`,
  );
  log(
    `load: autocannon in this process, ${config.connections} connections; per server ${config.warmup} s warm-up + ${config.duration} s measured ` +
      `in ${config.rounds} alternating round${config.rounds === 1 ? '' : 's'}`,
  );

  const dir = tempDirectory('vigil-bench-');
  const dataDir = join(dir, 'data');
  let started = performance.now();
  const seeded = seedTargets(dataDir, config.targets);
  log(`seed: ${config.targets} targets in one transaction, ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const command = vigilCommand();
  const profileDir = config.profile === undefined ? undefined : config.profile === '1' ? join(dir, 'profile') : resolve(config.profile);
  if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
  const port = await freePort();
  const vigil = startChild(
    'vigil',
    process.execPath,
    [...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]), ...command.args],
    childEnv({
      NODE_ENV: 'production',
      VIGIL_DATA_DIR: dataDir,
      VIGIL_HOST: '127.0.0.1',
      VIGIL_PORT: String(port),
      LOG_LEVEL: config.logLevel,
      VIGIL_RATE_LIMIT_PER_SECOND: '1000000',
      VIGIL_RATE_LIMIT_BURST: '1000000',
    }),
    ROOT,
  );
  const vigilUrl = `http://127.0.0.1:${port}`;
  started = performance.now();
  await waitForHttp(vigil, `${vigilUrl}/healthz`);
  log(`vigil: ${command.description}, LOG_LEVEL=${config.logLevel}, ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const walk = await walkPages(vigilUrl, seeded.apiKey, config.targets);
  log(
    `walk: ${walk.paths.length} pages, ${config.targets} distinct targets, newest first, ${(walk.ms / walk.paths.length).toFixed(1)} ms per page sequentially; ` +
      `page 1 is ${(walk.pageBytes / 1024).toFixed(0)} KiB`,
  );

  const bare = await startBare(dir, walk.firstPage);
  log(`bare: express ${expressVersion()} handler, res.json() of the same ${walk.firstPage.length} objects from memory`);
  log(`load cycles through all ${walk.paths.length} page paths (page 1 and every keyset page), for both servers`);
  log();

  const common = { paths: walk.paths, connections: config.connections };
  const vigilSide: Side = { name: 'vigil', options: { ...common, url: vigilUrl, headers: { [API_KEY_HEADER]: seeded.apiKey } }, samples: [] };
  const bareSide: Side = { name: 'bare express', options: { ...common, url: bare.url }, samples: [] };
  await measure([vigilSide, bareSide]);
  const vigilFigures = combine(vigilSide.name, vigilSide.samples);
  const bareFigures = combine(bareSide.name, bareSide.samples);

  log(formatTable([vigilFigures, bareFigures]));
  log();
  const ratio = vigilFigures.requestsPerSecond / bareFigures.requestsPerSecond;
  log(`ratio (vigil / bare requests per second): ${ratio.toFixed(2)} (aim >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`);
  const p99Ratio = vigilFigures.p99Ms / bareFigures.p99Ms;
  log(`p99 (vigil / bare): ${p99Ratio.toFixed(2)} (aim <= 2: ${p99Ratio <= 2 ? 'met' : 'NOT met'})`);

  if (profileDir !== undefined) {
    await vigil.stop(10_000); // --cpu-prof writes the profile at exit
    // With tsx there is also a loader thread's profile; the main thread's is the largest.
    const file = readdirSync(profileDir)
      .filter((name) => name.endsWith('.cpuprofile'))
      .sort((a, b) => statSync(join(profileDir, b)).size - statSync(join(profileDir, a)).size)[0];
    log();
    log(file === undefined ? `no .cpuprofile was written in ${profileDir}` : formatProfile(join(profileDir, file), 30));
  }
}

function expressVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules/express/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

const budgetSeconds = 2 * (config.warmup + config.duration + config.rounds) + 120;
runBenchmark(main, cleanup, budgetSeconds);
