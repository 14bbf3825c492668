/**
 * A plain HTTP server on loopback for tests that need real connections
 * (keep-alive pools, Agents): another test file's nock replaces
 * http.ClientRequest (no Agent, no connections), so nock is switched off
 * while the server runs and back on when it closes. Counts the connections
 * it accepted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';

export interface RealHttpServer {
  url: string;
  /** Connections accepted since the start or the last `reset()`. */
  readonly connections: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRealHttpServer(handler: http.RequestListener): Promise<RealHttpServer> {
  const nockWasActive = nock.isActive();
  if (nockWasActive) nock.restore();
  const server = http.createServer(handler);
  let connections = 0;
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    reset: () => (connections = 0),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (nockWasActive) nock.activate();
    },
  };
}
