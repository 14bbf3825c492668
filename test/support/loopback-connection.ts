/**
 * A TCP connection on loopback, made before each test of the mocha block
 * that calls this and closed after it: tests of the event loop write bytes
 * on `client` and see `accepted` read them in the loop's next poll.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface LoopbackConnection {
  readonly accepted: Socket;
  readonly client: Socket;
}

export function loopbackConnection(): LoopbackConnection {
  let server: Server;
  let accepted: Socket;
  let client: Socket;
  beforeEach(async () => {
    const connected = new Promise<Socket>((resolve) => {
      server = createServer(resolve);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    accepted = await connected;
  });
  afterEach(async () => {
    client.destroy();
    accepted.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    get accepted() {
      return accepted;
    },
    get client() {
      return client;
    },
  };
}
