/**
 * The fake Kubernetes API server of the tests, in a process of its own, so
 * bench/operator.ts measures the memory of Vigil's controller apart from the
 * objects and watch history the server holds. Driven over the fork's IPC
 * channel: `{ id, method, args }` in, `{ id, result }` or `{ id, error }` out.
 * What the benchmark reads often (CR states, request tallies) is computed
 * here, so a message carries a summary, not every object.
 */
import { FakeKubeApiServer, type KubeObject, type ObjectRef, type RecordedRequest } from '../../test/support/fake-kube-apiserver.js';

const server = new FakeKubeApiServer();

/** "POST secrets" and the like: the verb and the resource, what a request per scan costs. */
function kindOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const namespaced = parts.indexOf('namespaces');
  const rest = namespaced >= 0 ? parts.slice(namespaced + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const resource = rest[0] ?? '?';
  const sub = rest[2] === undefined ? '' : `/${rest[2]}`;
  return `${request.method} ${resource}${sub}`;
}

type ScanStatus = { state?: string; progress?: number } | undefined;
/** When each Scan CR was first seen showing a state: sampled every 5 ms while tracking. */
const firstSeen = new Map<string, number>();
let tracking: NodeJS.Timeout | undefined;

const handlers = {
  info: () => ({ url: server.url, token: server.token }),
  getObject: (ref: ObjectRef) => server.getObject(ref),
  setObject: (object: KubeObject) => void server.setObject(object),
  /** Many objects in one message (seeding). */
  setObjects: (objects: KubeObject[]) => void objects.forEach((object) => server.setObject(object)),
  /** Requests from index `from` on, each as "METHOD path?query" (watches marked). */
  requestLines: (from = 0) =>
    server.requests
      .slice(from)
      .map(
        (request) =>
          `${request.method} ${request.path}${request.watch ? ' (watch)' : ''}${Object.keys(request.query).length === 0 ? '' : `?${new URLSearchParams(request.query).toString()}`}`,
      ),
  count: (apiVersion: string, kind: string, namespace?: string) => server.listObjects(apiVersion, kind, namespace).length,
  /** Sets a running pod and its scanner's log line for every Job in the namespace. */
  runPods: (namespace: string, line: string) => {
    for (const job of server.listObjects('batch/v1', 'Job', namespace)) {
      const labels = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
      const name = `${job.metadata.name}-pod`;
      server.setObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels },
        status: {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } },
          ],
        },
      } as KubeObject);
      server.setPodLog(namespace, name, line, 'scanner');
    }
  },
  /** How many Scan CRs show this progress. */
  scansAtProgress: (namespace: string, progress: number) =>
    server.listObjects('vigil.dev/v1alpha1', 'Scan', namespace).filter((cr) => (cr.status as ScanStatus)?.progress === progress).length,
  /** Starts noting when each Scan CR first shows `state`. */
  track: (namespace: string, state: string) => {
    clearInterval(tracking);
    tracking = setInterval(() => {
      const now = Date.now();
      for (const cr of server.listObjects('vigil.dev/v1alpha1', 'Scan', namespace)) {
        const name = cr.metadata.name;
        if (name !== undefined && (cr.status as ScanStatus)?.state === state && !firstSeen.has(name)) firstSeen.set(name, now);
      }
    }, 5);
  },
  seen: () => Object.fromEntries(firstSeen),
  stopTracking: () => clearInterval(tracking),
  requestCount: () => server.requests.length,
  /** Requests from index `from` on: watches apart, the rest by kind. */
  requestTally: (from = 0) => {
    const byKind: Record<string, number> = {};
    let watches = 0;
    let events = 0;
    let total = 0;
    for (const request of server.requests.slice(from)) {
      if (request.watch) {
        watches += 1;
        continue;
      }
      total += 1;
      if (request.path.includes('/events')) events += 1;
      byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
    }
    return { total, watches, events, byKind };
  },
  /** The server's own memory, after dropping its watch history and a collection when --expose-gc. */
  memory: () => {
    server.compactHistory();
    globalThis.gc?.();
    return process.memoryUsage();
  },
  stop: async () => {
    clearInterval(tracking);
    await server.stop();
  },
};
export type KubeApiServerChild = typeof handlers;

process.on('message', (message: { id: number; method: keyof typeof handlers; args: unknown[] }) => {
  void (async () => {
    try {
      const result = await (handlers[message.method] as (...args: unknown[]) => unknown)(...message.args);
      process.send!({ id: message.id, result: result ?? null });
    } catch (error) {
      process.send!({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  })();
});
process.on('disconnect', () => void server.stop().finally(() => process.exit(0)));

await server.start();
process.send!({ ready: true });
