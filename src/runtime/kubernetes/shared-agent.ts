/**
 * One keep-alive Agent for every request of a KubeConfig, instead of one
 * Agent per request. client-node 1.x builds a new http(s).Agent (keepAlive
 * off, with its own copy of the TLS options) for each API call
 * (`KubeConfig.createAgent`, from applySecurityAuthentication and
 * applyToHTTPSOptions), so every request opened a TCP connection and a TLS
 * session of its own: in bench/operator.ts, sockets, Agents and TLS
 * contexts were the largest share of what the controller allocated while
 * 100 scans a second ended (a sampling heap profile of the completion
 * phase), and that garbage made the process's peak memory.
 *
 * The Agent is reused while the cluster (server, proxy, TLS name, skip-TLS)
 * and the TLS options client-node derives from the kubeconfig (CA, client
 * certificate and key, which it re-reads from their files) are the same; a
 * change (a rotated client certificate) gets a new Agent; the one before
 * is dropped, not destroyed (that would cut its watches and requests in
 * flight), and its idle connections end with the server's idle timeout. Only the API calls share it (client-node's
 * applySecurityAuthentication): watches and followed logs
 * (applyToHTTPSOptions, told apart by the TLS tuning keys it passes) hold
 * a connection each for their life and keep an Agent of their own without
 * keep-alive, as before (a long stream gains nothing from a pool).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import type * as k8s from './client-node.js';

type AgentOptions = Record<string, unknown>;
interface WithCreateAgent {
  createAgent(cluster: k8s.Cluster | null, options: AgentOptions): http.Agent;
}

const sharing = new WeakSet<object>();

export function shareAgents(kubeConfig: k8s.KubeConfig): void {
  const target = kubeConfig as unknown as WithCreateAgent;
  if (typeof target.createAgent !== 'function' || sharing.has(kubeConfig)) return; // another client-node, or shared already
  sharing.add(kubeConfig);
  const create = target.createAgent.bind(kubeConfig);
  let shared: { key: unknown[]; options: AgentOptions; agent: http.Agent } | undefined;
  target.createAgent = (cluster, options) => {
    // applyToHTTPSOptions (watches, followed logs: long streams, one connection each) passes the request's TLS tuning keys too: its own Agent, as before.
    if ('ciphers' in options) return create(cluster, options);
    const key = [cluster?.server, cluster?.proxyUrl, cluster?.tlsServerName, cluster?.skipTLSVerify];
    if (shared !== undefined && sameValues(shared.key, key) && sameOptions(shared.options, options)) return shared.agent;
    // client-node's proxy agents write into the options they are given: they get a copy.
    const agent = closingIdle(create(cluster, { ...options, keepAlive: true }));
    shared = { key, options: { ...options }, agent };
    return agent;
  };
}

/**
 * An idle connection is closed by Vigil after IDLE_SOCKET_MS, before the
 * server closes it (Node's servers after 5 s, the fake API server's among
 * them): a request sent on a connection the server is closing that moment
 * fails with ECONNRESET. Node's Agent destroys a free socket that times
 * out; a socket taken for a request has no timeout, as before.
 */
const IDLE_SOCKET_MS = 4_000;

function closingIdle(agent: http.Agent): http.Agent {
  const pooled = agent as unknown as { keepSocketAlive(socket: Socket): boolean; reuseSocket(socket: Socket, request: http.ClientRequest): void };
  if (typeof pooled.keepSocketAlive !== 'function' || typeof pooled.reuseSocket !== 'function') return agent; // a proxy agent: as it is
  const keep = pooled.keepSocketAlive.bind(agent);
  const reuse = pooled.reuseSocket.bind(agent);
  pooled.keepSocketAlive = (socket) => {
    if (!keep(socket)) return false;
    socket.setTimeout(IDLE_SOCKET_MS);
    return true;
  };
  pooled.reuseSocket = (socket, request) => {
    socket.setTimeout(0);
    reuse(socket, request);
  };
  return agent;
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, index) => sameValue(value, b[index]));
}

function sameOptions(a: AgentOptions, b: AgentOptions): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (!sameValue(a[key], b[key])) return false;
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return sameValues(a, b);
  return false;
}
