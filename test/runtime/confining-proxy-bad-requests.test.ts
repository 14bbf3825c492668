/**
 * The login replay's confining proxy answers malformed requests with 400 and
 * keeps serving (issue 26): `CONNECT 127.0.0.1:99999` made net.connect throw
 * inside an unawaited promise, and the unhandled rejection ended `vigil serve`.
 * The proxy runs as the replay runs it, on loopback, with 127.0.0.1 allowed.
 */
import { expect } from 'chai';
import { createServer, connect, type Server } from 'node:net';
import { ConfiningProxy, connectTarget } from '../../src/runtime/login-replay/confining-proxy.js';
import { parseCidrList } from '../../src/domain/targets/ipv4.js';
import { systemResolver } from '../../src/runtime/dns-resolver.js';

/** Sends raw bytes to the proxy and resolves with everything it answers before closing (or its first line). */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (answer.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

const statusLine = (answer: string) => answer.split('\r\n')[0];

describe('the login confining proxy and malformed requests', () => {
  let proxy: ConfiningProxy;
  let port: number;
  let upstream: Server;
  let upstreamPort: number;

  before(async () => {
    upstream = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
    proxy = new ConfiningProxy(parseCidrList('127.0.0.1/32'), systemResolver);
    port = await proxy.start();
  });
  after(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  const badConnects: Array<[string, string]> = [
    ['port 99999', '127.0.0.1:99999'],
    ['port 0', '127.0.0.1:0'],
    ['a non-numeric port', '127.0.0.1:http'],
    ['no port', '127.0.0.1'],
    ['an empty host', ':443'],
    ['a port of six digits', '127.0.0.1:100000'],
  ];
  for (const [what, target] of badConnects) {
    it(`answers CONNECT with ${what} with 400 and still tunnels a good CONNECT afterwards`, async () => {
      expect(statusLine(await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`))).to.equal('HTTP/1.1 400 Bad Request');
      expect(statusLine(await exchange(port, `CONNECT 127.0.0.1:${upstreamPort} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))).to.equal(
        'HTTP/1.1 200 Connection Established',
      );
    });
  }

  it('answers an over-long request line and a garbage request line with 400', async () => {
    expect(statusLine(await exchange(port, `CONNECT ${'a'.repeat(70_000)}:443 HTTP/1.1\r\n\r\n`))).to.equal('HTTP/1.1 400 Bad Request');
    expect(statusLine(await exchange(port, 'this is not http\r\n\r\n'))).to.equal('HTTP/1.1 400 Bad Request');
    expect(statusLine(await exchange(port, `CONNECT 127.0.0.1:${upstreamPort} HTTP/1.1\r\n\r\n`))).to.equal('HTTP/1.1 200 Connection Established');
  });

  it('answers absolute-form requests it cannot forward (port 99999, port 0, an unparseable host) with 400', async () => {
    for (const url of ['http://127.0.0.1:99999/', 'http://127.0.0.1:0/', 'http://[::1/', 'https://127.0.0.1/', '/relative']) {
      expect(statusLine(await exchange(port, `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)), url).to.equal('HTTP/1.1 400 Bad Request');
    }
  });

  it('reads a CONNECT target as host and a port from 1 to 65535', () => {
    expect(connectTarget('example.com:443')).to.deep.equal({ host: 'example.com', port: 443 });
    expect(connectTarget('[::1]:65535')).to.deep.equal({ host: '[::1]', port: 65535 });
    for (const bad of ['example.com:65536', 'example.com:0', 'example.com:', ':80', 'a b:80', 'example.com'])
      expect(connectTarget(bad), bad).to.equal(undefined);
  });
});
