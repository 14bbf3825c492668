/**
 * The forward proxy every request of the login browser goes through
 * (Chromium runs with --proxy-server pointing here and a bypass list that
 * sends loopback through it too). For each request it resolves the host
 * itself, applies the scanning address rules (public addresses, or the
 * VIGIL_ALLOW_TARGETS ranges) to every address the name has, and connects to
 * the address it checked: a name that rebinds between the check and the
 * connection cannot move the browser elsewhere, because the browser never
 * resolves names. Plain HTTP is forwarded; HTTPS and WebSockets arrive as
 * CONNECT and are tunnelled to the checked address (TLS stays end to end, the
 * browser checks the certificate against the name).
 *
 * Refusals are recorded with the host and the reason, so that the replay
 * fails with a message naming the host.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HostResolver } from '../../app/ports.js';
import { isAllowed, parseIpv4, specialPurposeRange, type Cidr } from '../../domain/targets/ipv4.js';

export interface Refusal {
  host: string;
  /** Names the rule, never the address (tenants read it in the login's failure, issue 26). */
  reason: string;
  /** The refused address a name resolved to, for the service's log only. */
  address?: string;
}

type Vetted = { address: string } | { refused: string } | { unreachable: string };

/** Connections to one vetted address may not hang the replay: the browser's own limits are longer. */
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_REFUSALS_KEPT = 20;
/** Marks the proxy's own answers (a refusal, a host it could not reach), so that `open` fails on them instead of going on with an error page. */
export const PROXY_ANSWER_HEADER = 'x-vigil-login-proxy';

export class ConfiningProxy {
  readonly refusals: Refusal[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket | Duplex>();

  constructor(
    private readonly allow: readonly Cidr[],
    private readonly resolver: HostResolver,
  ) {}

  /** Listens on an ephemeral loopback port and returns it. */
  async start(): Promise<number> {
    // Every request is answered here or refused with a status: no input may end the process (issue 26), so a
    // failure the checks did not foresee is a 502 to the browser, never an unhandled rejection.
    const server = createServer((req, res) => {
      this.forward(req, res).catch(() => answerFailure(res));
    });
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.tunnel(req, socket, head).catch(() => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    });
    server.on('clientError', (_error, socket: Duplex) => socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'));
    server.on('connection', (socket) => this.track(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private track(socket: Socket | Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** The address to connect to for a host, checked against the rules; every address of a name must pass. */
  async vet(rawHost: string): Promise<Vetted> {
    const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
    let addresses: string[];
    if (parseIpv4(host) !== undefined) addresses = [host];
    else if (host.includes(':')) return this.refuse(rawHost, 'it is an IPv6 address; only IPv4 addresses are reached');
    else {
      try {
        addresses = await this.resolver.resolve4(host);
      } catch (error) {
        return { unreachable: `DNS lookup of ${host} failed (${(error as { code?: string }).code ?? (error as Error).message})` };
      }
      if (addresses.length === 0) return { unreachable: `${host} has no IPv4 address` };
    }
    const resolved = addresses[0] !== host;
    for (const address of addresses) {
      const numeric = parseIpv4(address);
      if (numeric === undefined) return this.refuse(host, 'it resolves to an address that is not IPv4', address);
      const range = isAllowed(numeric, this.allow) ? undefined : specialPurposeRange(numeric);
      if (range !== undefined)
        return this.refuse(host, `${resolved ? 'it resolves to an address' : 'it is'} in the ${range} range`, resolved ? address : undefined);
    }
    return { address: addresses[0]! };
  }

  private refuse(host: string, reason: string, address?: string): Vetted {
    if (this.refusals.length < MAX_REFUSALS_KEPT) this.refusals.push({ host: host.slice(0, 253), reason, ...(address === undefined ? {} : { address }) });
    return { refused: reason };
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = URL.canParse(req.url ?? '') ? new URL(req.url!) : undefined;
    if (url === undefined || url.protocol !== 'http:' || url.hostname === '' || (url.port !== '' && portOf(url.port) === undefined)) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('Vigil login proxy: only absolute http:// requests with a host and a port from 1 to 65535 are forwarded');
      return;
    }
    const vetted = await this.vet(url.hostname);
    if (!('address' in vetted)) {
      res
        .writeHead('refused' in vetted ? 403 : 502, { 'content-type': 'text/plain', [PROXY_ANSWER_HEADER]: 'refused' in vetted ? 'refused' : 'unreachable' })
        .end(`Vigil login proxy: ${'refused' in vetted ? `refused ${url.hostname}: ${vetted.refused}` : vetted.unreachable}`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = httpRequest({
      host: vetted.address,
      port: url.port === '' ? 80 : Number(url.port),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.on('error', (error) => {
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'text/plain', [PROXY_ANSWER_HEADER]: 'unreachable' })
          .end(`Vigil login proxy: ${url.host} could not be reached: ${error.message}`);
      else res.destroy();
    });
    req.pipe(upstream);
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.track(client);
    client.on('error', () => client.destroy());
    const target = connectTarget(req.url ?? '');
    if (target === undefined) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const vetted = await this.vet(target.host);
    if (!('address' in vetted)) {
      client.end(`HTTP/1.1 ${'refused' in vetted ? '403 Forbidden' : '502 Bad Gateway'}\r\n\r\n`);
      return;
    }
    const upstream = connect({ host: vetted.address, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    this.track(upstream);
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('timeout', () => upstream.destroy());
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  }
}

/** A CONNECT request target, `host:port` with a port net.connect accepts (1-65535); undefined for anything else. */
export function connectTarget(requestTarget: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(requestTarget);
  if (match === null) return undefined;
  const port = portOf(match[2]!);
  return port === undefined ? undefined : { host: match[1]!, port };
}

function portOf(digits: string): number | undefined {
  const port = Number(digits);
  return /^\d{1,5}$/.test(digits) && port >= 1 && port <= 65_535 ? port : undefined;
}

function answerFailure(res: ServerResponse): void {
  if (res.headersSent) res.destroy();
  else res.writeHead(502, { 'content-type': 'text/plain', [PROXY_ANSWER_HEADER]: 'unreachable' }).end('Vigil login proxy: the request could not be forwarded');
}
