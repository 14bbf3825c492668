/**
 * Load generation with autocannon (in this process), aggregation of several
 * runs against the same server, and the printed table.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  /** Request paths, cycled in order across all connections. */
  paths: readonly string[];
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
}

/** One autocannon run. Latencies are recorded per response, so that runs can be merged exactly. */
export interface LoadSample {
  seconds: number;
  requests: number;
  bytes: number;
  latenciesMs: number[];
  non2xx: number;
  errors: number;
}

export interface LoadFigures {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  megabytesPerSecond: number;
  total: number;
  non2xx: number;
  errors: number;
}

export function runLoad(options: LoadOptions): Promise<LoadSample> {
  let next = 0;
  const paths = options.paths;
  const latenciesMs: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationSeconds,
        headers: options.headers ?? {},
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }),
          },
        ],
      },
      (error: unknown, result) => {
        if (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        resolve({
          seconds: result.duration,
          requests: result.requests.total,
          bytes: result.throughput.total,
          latenciesMs,
          non2xx: result.non2xx,
          errors: result.errors,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latenciesMs.push(responseTime));
  });
}

/** The value at `fraction` (0.5 for the median) of ascending `sorted`. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** Merges runs against one server: totals over total time, percentiles over every response. */
export function combine(name: string, samples: readonly LoadSample[]): LoadFigures {
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const requests = samples.reduce((sum, sample) => sum + sample.requests, 0);
  const latencies = samples.flatMap((sample) => sample.latenciesMs).sort((a, b) => a - b);
  return {
    name,
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    megabytesPerSecond: seconds > 0 ? samples.reduce((sum, sample) => sum + sample.bytes, 0) / seconds / 1_000_000 : 0,
    total: requests,
    non2xx: samples.reduce((sum, sample) => sum + sample.non2xx, 0),
    errors: samples.reduce((sum, sample) => sum + sample.errors, 0),
  };
}

/** Throws when any response was not 2xx, any connection failed, or nothing completed. */
export function assertClean(name: string, sample: LoadSample): void {
  if (sample.non2xx > 0 || sample.errors > 0) {
    throw new Error(`${name}: ${sample.non2xx} non-2xx responses and ${sample.errors} connection errors out of ${sample.requests} requests`);
  }
  if (sample.requests === 0) throw new Error(`${name}: no request completed`);
}

export function formatTable(rows: readonly LoadFigures[]): string {
  const header = ['name', 'req/s (mean)', 'p50 ms', 'p99 ms', 'MB/s', 'requests', 'non-2xx'];
  const cells = rows.map((row) => [
    row.name,
    row.requestsPerSecond.toFixed(1),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    row.megabytesPerSecond.toFixed(1),
    String(row.total),
    String(row.non2xx),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)));
  const line = (row: readonly string[]) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
