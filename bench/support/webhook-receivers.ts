/**
 * The webhook benchmark's receivers, in their own process so that they do not
 * share the sender's event loop: N HTTPS servers on 127.0.0.1 that read each
 * request and answer 204 at once. Prints `listening <port> <port> ...` once
 * bound, and `received <count> ... connections <count>` when stopped (SIGTERM).
 *
 * Usage: node --import tsx bench/support/webhook-receivers.ts <key.pem> <cert.pem> <count>
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

const [keyFile, certFile, countArg] = process.argv.slice(2);
if (keyFile === undefined || certFile === undefined || countArg === undefined) {
  process.stderr.write('usage: webhook-receivers.ts <key.pem> <cert.pem> <count>\n');
  process.exit(2);
}
const key = readFileSync(keyFile);
const cert = readFileSync(certFile);
const received: number[] = [];
let connections = 0;

function listen(index: number): Promise<Server> {
  received[index] = 0;
  const server = createServer({ key, cert, keepAliveTimeout: 30_000 }, (request, response) => {
    request.resume();
    request.on('end', () => {
      received[index]! += 1;
      response.writeHead(204).end();
    });
  });
  server.on('secureConnection', () => (connections += 1));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const servers = await Promise.all(Array.from({ length: Number(countArg) }, (_, index) => listen(index)));
process.stdout.write(`listening ${servers.map((server) => (server.address() as AddressInfo).port).join(' ')}\n`);
process.once('SIGTERM', () => {
  process.stdout.write(`received ${received.join(' ')} connections ${connections}\n`);
  for (const server of servers) server.closeAllConnections();
  process.exit(0);
});
