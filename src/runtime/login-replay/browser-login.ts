/**
 * Replays a login recording in headless Chromium (playwright-core with the
 * system browser, launched as the dashboard test launches it), confined by
 * ConfiningProxy: every request, loopback included, goes through the proxy,
 * which applies the scanning address rules. A refusal fails the replay with
 * the host named. Each command has a time limit and so has the replay as a
 * whole; the browser is closed whatever happens.
 *
 * The session handed to ZAP: the browser's cookies that apply to the target
 * URL, and the last Authorization header the pages sent to the target's
 * host, if any.
 */
// playwright-core is loaded on the first replay, not with the service: it adds about 80 MB of RSS to a process that may never replay a login
// (bench/operator.ts).
import type { Browser, BrowserContext } from 'playwright-core';
import type { HostResolver, LoginOutcome, LoginReplayer, LoginSession } from '../../app/ports.js';
import type { LoginRecording } from '../../domain/targets/login-recording.js';
import type { Cidr } from '../../domain/targets/ipv4.js';
import { ConfiningProxy, type Refusal } from './confining-proxy.js';
import { ReplayError, runCommand, type ReplayContext } from './selenium-commands.js';

const LOGIN_TIME_LIMITS = { commandMs: 15_000, replayMs: 120_000 } as const;

export interface BrowserLoginOptions {
  chromiumPath: string;
  allowTargets: readonly Cidr[];
  resolver: HostResolver;
  commandTimeoutMs?: number;
  replayTimeoutMs?: number;
  /** Each host the proxy refused, with the address a name resolved to: for the service's log, never the tenant's message. */
  onRefused?: (refusal: Refusal) => void;
}

const BROWSER_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Defence in depth: Chromium resolves no name itself (every name is the proxy's to resolve), so nothing it might send around the proxy finds an address. */
const NO_OWN_DNS = '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1';
/** WebRTC could otherwise send UDP around the proxy. */
const NO_DIRECT_UDP = ['--force-webrtc-ip-handling-policy=disable_non_proxied_udp', '--webrtc-ip-handling-policy=disable_non_proxied_udp'];

export class BrowserLoginReplayer implements LoginReplayer {
  constructor(private readonly options: BrowserLoginOptions) {}

  async replay(recording: LoginRecording, targetUrl: string): Promise<LoginOutcome> {
    const proxy = new ConfiningProxy(this.options.allowTargets, this.options.resolver);
    const port = await proxy.start();
    let browser: Browser | undefined;
    const replayMs = this.options.replayTimeoutMs ?? LOGIN_TIME_LIMITS.replayMs;
    let timer: NodeJS.Timeout | undefined;
    const overtime = new Promise<LoginOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, message: `the login replay took longer than ${Math.round(replayMs / 1000)} s and was stopped` }), replayMs);
    });
    try {
      const run = (async (): Promise<LoginOutcome> => {
        try {
          const { chromium } = await import('playwright-core');
          browser = await chromium.launch({
            executablePath: this.options.chromiumPath,
            args: [...BROWSER_ARGS, ...NO_DIRECT_UDP, `--proxy-server=http://127.0.0.1:${port}`, '--proxy-bypass-list=<-loopback>', NO_OWN_DNS],
          });
        } catch (error) {
          return {
            ok: false,
            message: `the browser for the login replay could not start (${oneLine((error as Error).message)}); install chromium (${this.options.chromiumPath})`,
          };
        }
        try {
          return await this.replayIn(browser, recording, targetUrl, proxy);
        } catch (error) {
          // The browser itself failed (crashed, or was closed when the replay ran out of time).
          return { ok: false, message: `the browser failed during the login replay: ${oneLine((error as Error).message ?? String(error))}` };
        }
      })();
      return await Promise.race([run, overtime]);
    } finally {
      clearTimeout(timer);
      await (browser as Browser | undefined)?.close().catch(() => undefined);
      await proxy.close();
      for (const refusal of proxy.refusals) this.options.onRefused?.(refusal);
    }
  }

  private async replayIn(browser: Browser, recording: LoginRecording, targetUrl: string, proxy: ConfiningProxy): Promise<LoginOutcome> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: false, serviceWorkers: 'block' });
    const authorization = watchAuthorization(context, new URL(targetUrl).hostname);
    const page = await context.newPage();
    const commandTimeoutMs = this.options.commandTimeoutMs ?? LOGIN_TIME_LIMITS.commandMs;
    page.setDefaultTimeout(commandTimeoutMs);
    const ctx: ReplayContext = { page, baseUrl: recording.url ?? targetUrl, commandTimeoutMs, variables: new Map() };
    for (const [index, command] of recording.commands.entries()) {
      const step = `command ${index + 1} of test '${recording.testName}', ${command.command}${command.target === '' ? '' : ` '${command.target.slice(0, 80)}'`}`;
      try {
        await withinLimit(runCommand(ctx, command), commandTimeoutMs + 1000);
      } catch (error) {
        return { ok: false, message: `${step} failed: ${refusalOf(proxy) ?? reasonOf(error)}` };
      }
      const refused = refusalOf(proxy);
      if (refused !== undefined) return { ok: false, message: `${step} failed: ${refused}` };
    }
    const cookies = await context.cookies([targetUrl]);
    const session: LoginSession = {
      cookies: cookies.map((cookie) => ({ name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path })),
      ...(authorization.value === undefined ? {} : { authorization: authorization.value }),
    };
    return { ok: true, session };
  }
}

function watchAuthorization(context: BrowserContext, host: string): { value: string | undefined } {
  const seen: { value: string | undefined } = { value: undefined };
  context.on('request', (request) => {
    if (!URL.canParse(request.url()) || new URL(request.url()).hostname !== host) return;
    void request
      .headerValue('authorization')
      .then((value) => {
        if (value !== null && value !== '') seen.value = value;
      })
      .catch(() => undefined);
  });
  return seen;
}

function refusalOf(proxy: ConfiningProxy): string | undefined {
  const refusal = proxy.refusals[0];
  return refusal === undefined
    ? undefined
    : `the browser was sent to ${refusal.host}, which Vigil refused: ${refusal.reason}; a login recording may only reach the addresses scans may reach (public ones, or VIGIL_ALLOW_TARGETS)`;
}

function reasonOf(error: unknown): string {
  if (error instanceof ReplayError) return error.message;
  return oneLine((error as Error).message ?? String(error))
    .replace(/\s*Call log:.*$/, '')
    .replace(/^\w+\.\w+: /, '');
}

async function withinLimit<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ReplayError(`the command took longer than ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
