/** Real TCP and UDP listeners on loopback for scanners to find. */
import { createServer, type Server, type Socket } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';

/** Ports in nmap's default TCP top-1000 list that a test may bind; the first free one is used. */
const TCP_TOP_PORTS = [8081, 8008, 8443, 9000, 9090, 10000, 8888, 5900, 6000, 7000];
/** Ports in nmap's UDP top-100 list (binding below 1024 needs root). */
const UDP_TOP_PORTS = [161, 162, 1900, 520, 69, 500, 4500, 1434, 49152, 5353];

async function listenOnFirstFree(server: Server, ports: number[]): Promise<number> {
  for (const port of ports) {
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) return port;
  }
  throw new Error(`none of the TCP ports ${ports.join(', ')} is free on 127.0.0.1`);
}

export interface TcpListener {
  port: number;
  close(): Promise<void>;
}

/**
 * A TCP service in nmap's top ports. `silent` holds connections without
 * answering, which keeps nmap's service detection busy for many seconds:
 * a scan that runs long enough to be stopped or lost. `port` binds that port
 * only (to bring a closed listener back where a scanner saw it before).
 */
export async function tcpListener(options: { silent?: boolean; port?: number } = {}): Promise<TcpListener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (!options.silent) socket.end('220 vigil-test ready\r\n');
  });
  const port = await listenOnFirstFree(server, options.port === undefined ? TCP_TOP_PORTS : [options.port]);
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface UdpListener {
  port: number;
  close(): Promise<void>;
}

/** A UDP echo service in nmap's top UDP ports: it answers every datagram, so nmap sees the port open. */
export async function udpEchoListener(): Promise<UdpListener> {
  for (const port of UDP_TOP_PORTS) {
    const socket: UdpSocket = createSocket('udp4');
    socket.on('message', (message, remote) => socket.send(message, remote.port, remote.address));
    const bound = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) return { port, close: () => new Promise((resolve) => socket.close(() => resolve())) };
    socket.close();
  }
  throw new Error(`none of the UDP ports ${UDP_TOP_PORTS.join(', ')} is free on 127.0.0.1`);
}
