/**
 * A throwaway CA and HTTPS receivers on loopback for webhook tests: certificates
 * made by openssl for each run, never trusted outside the test.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface Pems {
  caCert: string;
  serverKey: string;
  serverCert: string;
  selfSignedKey: string;
  selfSignedCert: string;
}

const SAN = 'subjectAltName=IP:127.0.0.1,DNS:localhost';

export function makeCertificates(dir: string): Pems {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=Vigil Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'server.ext'), `${SAN}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '1',
    '-extfile',
    'server.ext',
  );
  openssl('req', '-x509', ...ec, '-keyout', 'self.key', '-out', 'self.crt', '-days', '1', '-subj', '/CN=localhost', '-addext', SAN);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return {
    caCert: read('ca.crt'),
    serverKey: read('server.key'),
    serverCert: read('server.crt'),
    selfSignedKey: read('self.key'),
    selfSignedCert: read('self.crt'),
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  url: string;
  connections: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export type Respond = (request: IncomingMessage, response: ServerResponse) => void;

export async function startReceiver(key: string, cert: string, respond: Respond, port = 0): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer({ key, cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      respond(request, response);
    });
  });
  const receiver = { connections: 0, requests } as Receiver;
  server.on('connection', () => (receiver.connections += 1));
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://127.0.0.1:${receiver.port}/hooks/vigil`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
