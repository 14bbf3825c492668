/**
 * Vigil's requests to the Kubernetes API server: JSON over Node's
 * http(s).request, with client-node's KubeConfig for the cluster, the
 * credentials and the TLS settings (applySecurityAuthentication, so every
 * kind of kubeconfig user client-node knows works here too: tokens, client
 * certificates, exec and OIDC plugins, impersonation) and the shared
 * keep-alive Agent (shared-agent.ts).
 *
 * Why not client-node's generated API classes: each of their calls
 * serialises the body through its ObjectSerializer (a walk of the model's
 * type map for every field), sends it through node-fetch (whose Headers sort
 * and copy), a middleware chain of promises, and deserialises the answer
 * the same way. In bench/operator.ts, with 1,000 scans starting, that was
 * the larger part of the 364 MiB the controller allocated in 28 s (a
 * sampling heap profile; serialize and node-fetch's header sort alone 34
 * MiB), and that garbage made the process's peak memory. Vigil's objects
 * are plain JSON already (job-manifest.ts builds them): they are sent as
 * they are, and answers are parsed with JSON.parse.
 *
 * Informers list through `listAll` here (in pages: a list of any length
 * stays within MAX_ANSWER_BYTES per answer), then watch with client-node's
 * makeInformer; followed logs stay on client-node's transport
 * (log-follower.ts).
 */
import http from 'node:http';
import https from 'node:https';
import type * as k8s from './client-node.js';
import { statusCodeOf } from './kube-errors.js';

/** The content types of Kubernetes' three patch kinds. */
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export type PatchType = typeof MERGE_PATCH | typeof JSON_PATCH;

/**
 * An answer Vigil reads is one object or a short list (a Status, a Scan, a
 * pod's Events by field selector): anything larger is refused rather than
 * held, as every input from outside is bounded (README, Bounds).
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * Objects per page of a list (`limit`): a list of any length arrives in
 * answers far below MAX_ANSWER_BYTES (500 Scans applied with kubectl, each
 * with its last-applied annotation and managedFields, are about 1 MiB).
 */
export const LIST_PAGE_SIZE = 500;

/** Times a list starts again from its first page after its continue token expired (410), before it fails (the informer restarts it later). */
const LIST_RESTARTS = 3;

/**
 * A non-2xx answer. `code` and `body` are what client-node's ApiException
 * carried, so kube-errors.ts reads both the same way.
 */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    request: string,
  ) {
    super(`${request}: HTTP ${code}${statusMessageOf(body)}`);
    this.name = 'KubeApiError';
  }
}

function statusMessageOf(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    return typeof message === 'string' && message !== '' ? `: ${message}` : '';
  } catch {
    return '';
  }
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** For PATCH: how `body` patches the object (default merge patch). */
  patch?: PatchType;
}

export interface ListOptions<T> {
  query?: RequestOptions['query'];
  /** Sees every object as its page arrives. */
  each?: (item: T) => void;
}

/** One page of a list as the API server sends it (client-node's V1ListMeta names `continue` `_continue`). */
interface ListPage<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Paths of the objects Vigil reads and writes. */
export const kubePaths = {
  /** A core (v1) resource in a namespace: `/api/v1/namespaces/{ns}/{plural}[/{name}]`. */
  core: (namespace: string, plural: string, name?: string): string =>
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`,
  /** A resource of an API group in a namespace: `/apis/{group}/{version}/namespaces/{ns}/{plural}[/{name}[/{subresource}]]`. */
  namespaced: (group: string, version: string, namespace: string, plural: string, name?: string, subresource?: string): string =>
    `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}${subresource === undefined ? '' : `/${subresource}`}`,
};

/** The part of client-node's RequestContext that applySecurityAuthentication writes to. */
interface AuthenticationTarget {
  setHeaderParam(name: string, value: string): void;
  setAgent(agent: http.Agent | https.Agent): void;
}

/** Told of every request a KubeApi sends: its verb (list for a paged GET of a collection) and the answer's status (0: none). */
export type KubeRequestObserver = (verb: string, code: number) => void;

const observers = new WeakMap<object, KubeRequestObserver>();

/**
 * Every KubeApi made on this kubeconfig reports its requests (metrics):
 * Vigil's adapters each build their own KubeApi on the one kubeconfig the
 * composition root loads, as shareAgents attaches the shared Agent to it.
 */
export function observeKubeRequests(kubeConfig: k8s.KubeConfig, observer: KubeRequestObserver): void {
  observers.set(kubeConfig, observer);
}

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PATCH: 'patch', DELETE: 'delete' };

export class KubeApi {
  constructor(private readonly kubeConfig: k8s.KubeConfig) {}

  get<T>(path: string, options: Omit<RequestOptions, 'body' | 'patch'> = {}): Promise<T> {
    return this.request<T>('GET', path, options);
  }

  create<T = unknown>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  patch<T = unknown>(path: string, body: unknown, patch: PatchType = MERGE_PATCH): Promise<T> {
    return this.request<T>('PATCH', path, { body, patch });
  }

  delete<T = unknown>(path: string, query: RequestOptions['query'] = {}): Promise<T> {
    return this.request<T>('DELETE', path, { query });
  }

  /**
   * Every object of a collection, listed in pages of LIST_PAGE_SIZE with
   * `limit` and `continue`, as one list at the first page's
   * resourceVersion (the API server serves every page from that snapshot,
   * so a watch resumes from it). `each` sees every object as its page
   * arrives, before the next is asked for (an informer's trim: only what it
   * keeps is held across pages). A continue token that expired (410 Gone,
   * the snapshot compacted away) starts the list again from scratch.
   */
  async listAll<T extends k8s.KubernetesObject>(path: string, options: ListOptions<T> = {}): Promise<k8s.KubernetesListObject<T>> {
    for (let restarts = 0; ; restarts += 1) {
      try {
        return await this.listPages<T>(path, options);
      } catch (error) {
        if (statusCodeOf(error) !== 410 || restarts >= LIST_RESTARTS) throw error;
      }
    }
  }

  private async listPages<T extends k8s.KubernetesObject>(path: string, options: ListOptions<T>): Promise<k8s.KubernetesListObject<T>> {
    const items: T[] = [];
    let page: ListPage<T>;
    let token: string | undefined;
    do {
      page = await this.get<ListPage<T>>(path, { query: { ...options.query, limit: String(LIST_PAGE_SIZE), continue: token } });
      for (const item of page.items) {
        options.each?.(item);
        items.push(item);
      }
      token = page.metadata?.continue || undefined;
    } while (token !== undefined);
    return { ...page, metadata: { resourceVersion: page.metadata?.resourceVersion ?? '' }, items };
  }

  async request<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, options: RequestOptions = {}): Promise<T> {
    const observer = observers.get(this.kubeConfig);
    if (observer === undefined) return this.send<T>(method, path, options);
    const verb = method === 'GET' && options.query?.limit !== undefined ? 'list' : VERBS[method]!;
    try {
      const answer = await this.send<T>(method, path, options);
      observer(verb, 200);
      return answer;
    } catch (error) {
      observer(verb, error instanceof KubeApiError ? error.code : 0);
      throw error;
    }
  }

  private async send<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, options: RequestOptions): Promise<T> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    const headers: Record<string, string> = { accept: 'application/json' };
    let agent: http.Agent | undefined;
    const target: AuthenticationTarget = {
      setHeaderParam: (name, value) => (headers[name] = value),
      setAgent: (given) => (agent = given),
    };
    await this.kubeConfig.applySecurityAuthentication(target as unknown as k8s.RequestContext);
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    if (payload !== undefined) {
      headers['content-type'] = method === 'PATCH' ? (options.patch ?? MERGE_PATCH) : 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const send = url.protocol === 'https:' ? https.request : http.request;
    const described = `${method} ${path}`;
    return new Promise<T>((resolve, reject) => {
      const outgoing = send(url, { method, headers, ...(agent === undefined ? {} : { agent }) });
      outgoing.on('error', reject);
      outgoing.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('error', reject);
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            outgoing.destroy();
            reject(new Error(`${described}: the API server's answer is over ${MAX_ANSWER_BYTES} bytes; refused`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const text = Buffer.concat(chunks, size).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status < 200 || status > 299) {
            reject(new KubeApiError(status, text, described));
            return;
          }
          try {
            resolve((text === '' ? undefined : JSON.parse(text)) as T);
          } catch {
            reject(new Error(`${described}: the API server's answer is not JSON`));
          }
        });
      });
      outgoing.end(payload);
    });
  }
}
