/**
 * Starts the real service on a loopback port with a fresh data directory,
 * and talks to it over a socket. Every JSON response is checked against the
 * OpenAPI document the service itself serves.
 */
import { Writable } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadSettings, type Settings } from '../../src/config/settings.js';
import type { NewAccount } from '../../src/app/accounts-service.js';
import type { Clock } from '../../src/domain/clock.js';
import { composeVigil, type Vigil } from '../../src/main/composition-root.js';
import { createLogger } from '../../src/observability/logger.js';
import { ResponseValidator } from './openapi-validator.js';
import { tempDir } from './temp-dir.js';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Uint8Array;
  contentType?: string;
  /** A multipart/form-data body; fetch writes its Content-Type with the boundary. */
  formData?: FormData;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
}

export class TestService {
  private constructor(
    /** Every log line the service wrote, for checks that secrets never reach logs. */
    readonly logLines: string[],
    readonly vigil: Vigil,
    readonly baseUrl: string,
    readonly settings: Settings,
    readonly apiKey: string,
    readonly accountId: string,
    private readonly validator: ResponseValidator,
    private readonly removeDir: () => void,
  ) {}

  /** Starts a service; with `dataDir`, on an existing data directory (a restart), which stop() then leaves in place. */
  static async start(
    options: { env?: Record<string, string>; clock?: Clock; dataDir?: string; accountName?: string; kubeConfig?: KubeConfig; reportWorker?: URL } = {},
  ): Promise<TestService> {
    const dir = options.dataDir === undefined ? tempDir() : { path: options.dataDir, remove: () => undefined };
    // PATH as the test process has it, so scanners are found as `make run` finds them, unless a test sets its own.
    const settings = loadSettings({ PATH: process.env.PATH ?? '', VIGIL_DATA_DIR: dir.path, VIGIL_PORT: '0', LOG_LEVEL: 'info', ...options.env });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const vigil = composeVigil(settings, createLogger(settings.logLevel, sink), {
      clock: options.clock,
      defaultMetrics: false,
      kubeConfig: options.kubeConfig,
      reportWorker: options.reportWorker,
    });
    const { account, apiKey } = vigil.accounts.createAccount({ name: options.accountName ?? 'test-account' });
    const server = await vigil.listen();
    const address = server.address() as { port: number };
    const baseUrl = `http://127.0.0.1:${address.port}`;
    const document = await (await fetch(`${baseUrl}/v1/openapi.json`)).json();
    return new TestService(lines, vigil, baseUrl, settings, apiKey, account.id, await ResponseValidator.fromDocument(document), dir.remove);
  }

  /** A second account with its own key, for isolation checks. */
  createAccount(name: string, options: Omit<NewAccount, 'name'> = {}) {
    return this.vigil.accounts.createAccount({ name, ...options });
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.apiKey : options.key;
    if (key !== null) headers['X-SERVICE-API-KEY'] = key;
    let body: string | Uint8Array | FormData | undefined = options.formData;
    if (options.rawBody !== undefined || options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      body = options.rawBody ?? JSON.stringify(options.body);
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
    const parsed = isJson && text !== '' ? JSON.parse(text) : undefined;
    if (isJson && url.pathname.startsWith('/v1/')) this.validator.validate(method, url.pathname, response.status, parsed);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  /** Checks a response read some other way (a raw socket) against the OpenAPI document. */
  validateResponse(method: string, path: string, status: number, body: unknown): void {
    this.validator.validate(method, path, status, body);
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }

  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }

  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }

  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  async stop(): Promise<void> {
    await this.vigil.close();
    this.removeDir();
  }
}
