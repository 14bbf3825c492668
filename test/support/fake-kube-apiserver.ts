/**
 * An in-process fake of the Kubernetes API server, for adapter tests that
 * drive the real @kubernetes/client-node (informers included). No
 * kube-apiserver, envtest or kind runs on these machines (STACK.md).
 *
 * It keeps the parts of the API server's behaviour the adapter depends on:
 * resourceVersions from one counter, 409 AlreadyExists and Conflict,
 * the status subresource, generation bumped only on spec changes, merge and
 * JSON patches, propagation policies with a synchronous garbage collector,
 * finalizers, pod logs, lists in pages (`limit` and `continue`, each list a
 * snapshot; a continue token answers 410 once it expired or the history was
 * compacted), and watches that replay history or answer 410 once it is
 * compacted. Errors are Kubernetes Status objects.
 *
 * Deliberate simplifications: no admission (a namespace need not exist),
 * strategic merge patch on built-in types is applied as a merge patch,
 * no server-side apply, pods are deleted without a grace
 * period (there is no kubelet) and Foreground deletion completes before the
 * DELETE returns (the events still arrive in the real order).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** A Kubernetes `Status`, the body of every error answer. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string };
  code: number;
}

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

/** One resource type the fake serves. */
export interface ResourceDefinition {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** Writes to the main endpoint ignore `status`; `/status` writes change only `status`. */
  statusSubresource: boolean;
  /** Custom resources refuse a PUT without metadata.resourceVersion and strategic merge patches. */
  customResource: boolean;
  tracksGeneration: boolean;
  /** What DELETE does to dependents when the request names no policy (batch/v1 Jobs orphan, for compatibility). */
  defaultPropagation: PropagationPolicy;
  /** The status the API server sets on create (creates cannot set status when there is a subresource). */
  initialStatus?: Record<string, unknown>;
  maxNameLength?: number;
  /** DELETE answers the object rather than a Success Status (pods do). */
  returnsDeletedObject?: boolean;
}

function resourceType(fields: Pick<ResourceDefinition, 'group' | 'version' | 'plural' | 'kind'> & Partial<ResourceDefinition>): ResourceDefinition {
  return { namespaced: true, statusSubresource: true, customResource: false, tracksGeneration: true, defaultPropagation: 'Background', ...fields };
}

export const DEFAULT_RESOURCES: readonly ResourceDefinition[] = [
  resourceType({ group: 'vigil.dev', version: 'v1alpha1', plural: 'scans', kind: 'Scan', customResource: true }),
  resourceType({ group: 'vigil.dev', version: 'v1alpha1', plural: 'scheduledscans', kind: 'ScheduledScan', customResource: true }),
  resourceType({ group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', defaultPropagation: 'Orphan', initialStatus: {}, maxNameLength: 63 }),
  resourceType({
    group: '',
    version: 'v1',
    plural: 'pods',
    kind: 'Pod',
    tracksGeneration: false,
    initialStatus: { phase: 'Pending' },
    returnsDeletedObject: true,
  }),
  // Secrets have no status subresource; the runner creates and deletes them.
  resourceType({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', statusSubresource: false, tracksGeneration: false }),
  resourceType({
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    tracksGeneration: false,
    initialStatus: { phase: 'Active' },
    maxNameLength: 63,
  }),
  resourceType({ group: '', version: 'v1', plural: 'events', kind: 'Event', statusSubresource: false, tracksGeneration: false }),
  // The runner creates the scanner's ServiceAccount in a tenant namespace before its first Job.
  resourceType({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', statusSubresource: false, tracksGeneration: false }),
];

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  /** Parsed JSON when the body is JSON, the raw text otherwise, undefined when empty. */
  body: unknown;
  headers: IncomingHttpHeaders;
  watch: boolean;
}

export interface RecordedDeletion {
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
  /** What the request asked for (query or DeleteOptions body), undefined when it named nothing. */
  propagationPolicy: PropagationPolicy | undefined;
  /** What the fake applied: the request's policy or the resource's default. */
  appliedPolicy: PropagationPolicy;
  gracePeriodSeconds: number | undefined;
}

export interface RequestMatch {
  method?: string;
  /** The exact path (no query string), or a pattern tested against it. */
  path?: string | RegExp;
  watch?: boolean;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface OpenWatch {
  path: string;
  namespace: string | undefined;
  resourceVersion: string;
  labelSelector: string | undefined;
}

export interface FakeKubeApiServerOptions {
  /** The bearer token every request must carry; kubeconfig.ts uses the same default. */
  token?: string;
  /** More bearer tokens accepted: one per client a test tells apart in `requests` (its `authorization` header). */
  moreTokens?: string[];
  now?: () => Date;
  /** Extra resource types, served next to DEFAULT_RESOURCES. */
  resources?: ResourceDefinition[];
  /**
   * RBAC in tests: a sentence refuses the request with 403 Forbidden, as the
   * API server's authorizer would; undefined lets it through. Refused
   * requests are recorded too.
   */
  authorize?: (request: RecordedRequest) => string | undefined;
}

export const DEFAULT_TOKEN = 'vigil-fake-apiserver-token';

// ---------------------------------------------------------------------------
// Status objects

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: unknown,
  ) {
    super(`API error ${code}`);
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function failureStatus(code: number, message: string, reason = REASONS[code] ?? 'Unknown', details?: KubeStatus['details']): KubeStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

function apiError(code: number, message: string, reason?: string, details?: KubeStatus['details']): ApiError {
  return new ApiError(code, failureStatus(code, message, reason, details));
}

function qualifiedName(resource: ResourceDefinition): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

function notFound(resource: ResourceDefinition, name: string): ApiError {
  return apiError(404, `${qualifiedName(resource)} "${name}" not found`, 'NotFound', { name, group: resource.group, kind: resource.plural });
}

function conflict(resource: ResourceDefinition, name: string, why: string): ApiError {
  return apiError(409, `Operation cannot be fulfilled on ${qualifiedName(resource)} "${name}": ${why}`, 'Conflict', {
    name,
    group: resource.group,
    kind: resource.plural,
  });
}

function invalid(resource: ResourceDefinition, name: string, cause: string): ApiError {
  const kind = resource.group ? `${resource.kind}.${resource.group}` : resource.kind;
  return apiError(422, `${kind} "${name}" is invalid: ${cause}`, 'Invalid', { name, group: resource.group, kind: resource.kind });
}

const STALE = 'the object has been modified; please apply your changes to the latest version and try again';
const NO_ROUTE = () => apiError(404, 'the server could not find the requested resource', 'NotFound');

// ---------------------------------------------------------------------------
// Plain JSON helpers, merge patch (RFC 7386) and JSON patch (RFC 6902)

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Sets an own property even for keys like `__proto__`, which plain assignment would treat specially. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, mergePatch(result[key], value));
  }
  return result;
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) {
    throw apiError(400, `invalid JSON pointer: ${String(pointer)}`);
  }
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number): number {
  const index = /^(0|[1-9]\d*)$/.test(token) ? Number(token) : NaN;
  if (!(index < length)) throw apiError(422, `index out of range or not a number: ${token}`, 'Invalid');
  return index;
}

function valueAt(document: unknown, path: string[]): unknown {
  let node = document;
  for (const token of path) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length)];
    else if (isRecord(node) && Object.hasOwn(node, token)) node = node[token];
    else throw apiError(422, `doc is missing path: /${path.join('/')}`, 'Invalid');
  }
  return node;
}

function addAt(document: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = valueAt(document, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : arrayIndex(key, parent.length + 1), 0, value);
  else if (isRecord(parent)) setOwn(parent, key, value);
  else throw apiError(422, `doc is missing path: /${path.join('/')}`, 'Invalid');
  return document;
}

function removeAt(document: unknown, path: string[]): unknown {
  const parent = path.length > 0 ? valueAt(document, path.slice(0, -1)) : undefined;
  const key = path[path.length - 1] ?? '';
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length), 1);
  else if (isRecord(parent) && Object.hasOwn(parent, key)) delete parent[key];
  else throw apiError(422, `unable to remove nonexistent key: ${key}: missing value`, 'Invalid');
  return document;
}

function applyJsonPatchOperation(document: unknown, operation: unknown): unknown {
  if (!isRecord(operation) || typeof operation.op !== 'string') throw apiError(400, 'a JSON patch operation needs "op" and "path"');
  const path = parsePointer(operation.path);
  switch (operation.op) {
    case 'add':
      return addAt(document, path, clone(operation.value));
    case 'remove':
      return removeAt(document, path);
    case 'replace':
      return addAt(removeAt(document, path), path, clone(operation.value));
    case 'move': {
      const from = parsePointer(operation.from);
      const value = valueAt(document, from);
      return addAt(removeAt(document, from), path, value);
    }
    case 'copy':
      return addAt(document, path, clone(valueAt(document, parsePointer(operation.from))));
    case 'test':
      if (!isDeepStrictEqual(valueAt(document, path), operation.value)) {
        throw apiError(422, `testing value ${String(operation.path)} failed`, 'Invalid');
      }
      return document;
    default:
      throw apiError(400, `unexpected kind of JSON patch operation: ${operation.op}`);
  }
}

function applyJsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) {
    throw apiError(400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch', 'BadRequest');
  }
  return operations.reduce(applyJsonPatchOperation, clone(document));
}

// ---------------------------------------------------------------------------
// Label and field selectors

interface Requirement {
  key: string;
  operator: 'in' | 'notin' | 'exists' | '!exists';
  values: string[];
}

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const SELECTOR_TERMS: Array<[RegExp, (match: RegExpMatchArray) => Requirement]> = [
  [new RegExp(`^!\\s*(${KEY})$`), (m) => ({ key: m[1]!, operator: '!exists', values: [] })],
  [new RegExp(`^(${KEY})$`), (m) => ({ key: m[1]!, operator: 'exists', values: [] })],
  [new RegExp(`^(${KEY})\\s*(==|=)\\s*([-A-Za-z0-9_.]*)$`), (m) => ({ key: m[1]!, operator: 'in', values: [m[3]!] })],
  [new RegExp(`^(${KEY})\\s*!=\\s*([-A-Za-z0-9_.]*)$`), (m) => ({ key: m[1]!, operator: 'notin', values: [m[2]!] })],
  [
    new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`),
    (m) => ({ key: m[1]!, operator: m[2] as 'in' | 'notin', values: m[3]!.split(',').map((value) => value.trim()) }),
  ],
];

function splitTerms(selector: string): string[] {
  return selector
    .split(/,(?![^(]*\))/)
    .map((term) => term.trim())
    .filter((term) => term !== '');
}

/** Equality (`=`, `==`, `!=`), existence (`key`, `!key`) and set (`in`, `notin`) requirements, all ANDed. */
export function parseLabelSelector(selector: string | undefined): Requirement[] {
  return splitTerms(selector ?? '').map((term) => {
    for (const [pattern, build] of SELECTOR_TERMS) {
      const match = term.match(pattern);
      if (match) return build(match);
    }
    throw apiError(400, `unable to parse requirement: found '${term}'`, 'BadRequest');
  });
}

function satisfies(fields: Record<string, string | undefined>, requirements: Requirement[]): boolean {
  return requirements.every(({ key, operator, values }) => {
    const value = fields[key];
    if (operator === 'exists') return value !== undefined;
    if (operator === '!exists') return value === undefined;
    const listed = value !== undefined && values.includes(value);
    return operator === 'in' ? listed : !listed;
  });
}

const SELECTABLE_FIELDS = ['metadata.name', 'metadata.namespace', 'involvedObject.kind', 'involvedObject.name', 'reason'];

function parseFieldSelector(selector: string | undefined): Requirement[] {
  const requirements = parseLabelSelector(selector);
  const unsupported = requirements.find((requirement) => !SELECTABLE_FIELDS.includes(requirement.key) || requirement.operator.includes('exists'));
  if (unsupported) throw apiError(400, `field label not supported: ${unsupported.key}`, 'BadRequest');
  return requirements;
}

// ---------------------------------------------------------------------------
// The server

type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface StoredEvent {
  revision: number;
  type: ObjectEventType;
  resource: ResourceDefinition;
  object: KubeObject;
  previous: KubeObject | undefined;
}

interface Watcher {
  resource: ResourceDefinition;
  namespace: string | undefined;
  labels: Requirement[];
  fields: Requirement[];
  bookmarks: boolean;
  response: ServerResponse;
  info: OpenWatch;
}

interface Route {
  resource: ResourceDefinition;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

interface DeleteOptions {
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  gracePeriodSeconds?: unknown;
  preconditions?: { uid?: unknown; resourceVersion?: unknown };
}

interface InjectedFailure {
  matches: (request: RecordedRequest) => boolean;
  code: number;
  body: unknown;
}

const FOREGROUND_FINALIZER = 'foregroundDeletion';
const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A response whose writes go nowhere: the request is served, the answer is never sent. */
function discardingResponse(response: ServerResponse): ServerResponse {
  return new Proxy(response, {
    get(target, property, receiver) {
      if (property === 'writeHead' || property === 'write' || property === 'end' || property === 'setHeader') return () => receiver;
      if (property === 'headersSent') return false;
      return Reflect.get(target, property, target);
    },
  });
}

function apiVersionOf(resource: ResourceDefinition): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

function storeKey(resource: ResourceDefinition, namespace: string | undefined, name: string): string {
  return `${qualifiedName(resource)}/${namespace ?? ''}/${name}`;
}

function specOf(object: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return rest;
}

function matchesRequest(match: RequestMatch, request: RecordedRequest): boolean {
  if (match.method !== undefined && match.method.toUpperCase() !== request.method) return false;
  if (match.watch !== undefined && match.watch !== request.watch) return false;
  if (typeof match.path === 'string') return match.path === request.path;
  return match.path === undefined || match.path.test(request.path);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function sendJson(response: ServerResponse, code: number, body: unknown): void {
  response.writeHead(code, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export class FakeKubeApiServer {
  /** Every request in arrival order, injected failures included. */
  readonly requests: RecordedRequest[] = [];
  /** Every DELETE that found its object, with the policy asked for and the one applied. */
  readonly deletions: RecordedDeletion[] = [];
  readonly token: string;

  private readonly tokens: Set<string>;
  private readonly resources: ResourceDefinition[];
  private readonly now: () => Date;
  private readonly authorize: FakeKubeApiServerOptions['authorize'];
  private readonly objects = new Map<string, { resource: ResourceDefinition; object: KubeObject }>();
  private readonly podLogs = new Map<string, string>();
  /** Open `follow=true` log streams by log key: what setPodLog appends is written to them. */
  private readonly logFollowers = new Map<string, Set<ServerResponse>>();
  private readonly watchers = new Set<Watcher>();
  private readonly failures: InjectedFailure[] = [];
  private readonly lostReplies: Array<(request: RecordedRequest) => boolean> = [];
  private readonly holds: Array<{ matches: (request: RecordedRequest) => boolean; released: Promise<void> }> = [];
  /** Paged lists under way, by continue token id: the list's objects and resourceVersion when its first page was served. */
  private readonly pagedLists = new Map<string, { items: KubeObject[]; resourceVersion: string }>();
  private history: StoredEvent[] = [];
  private revision = 1;
  private oldestWatchableRevision = 0;
  private server: Server | undefined;
  private baseUrl: string | undefined;

  constructor(options: FakeKubeApiServerOptions = {}) {
    this.token = options.token ?? DEFAULT_TOKEN;
    this.tokens = new Set([this.token, ...(options.moreTokens ?? [])]);
    this.now = options.now ?? (() => new Date());
    this.resources = [...DEFAULT_RESOURCES, ...(options.resources ?? [])];
    this.authorize = options.authorize;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.breakWatches();
    for (const followers of this.logFollowers.values()) for (const follower of followers) follower.destroy();
    this.logFollowers.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    if (!this.baseUrl) throw new Error('FakeKubeApiServer: call start() first');
    return this.baseUrl;
  }

  /** The latest resourceVersion, as a list would report it. */
  get resourceVersion(): string {
    return String(this.revision);
  }

  get openWatches(): OpenWatch[] {
    return [...this.watchers].map((watcher) => ({ ...watcher.info }));
  }

  // --- test hooks ----------------------------------------------------------

  /** The next request that matches answers `code` with `body` (a Status by default), once. */
  failNext(match: RequestMatch | ((request: RecordedRequest) => boolean), code: number, body?: unknown): void {
    const matches = typeof match === 'function' ? match : (request: RecordedRequest) => matchesRequest(match, request);
    this.failures.push({ matches, code, body: body ?? failureStatus(code, `injected failure (${code})`) });
  }

  /** The next matching request is applied but its reply is lost: the connection drops before any answer. */
  loseNextReply(match: RequestMatch | ((request: RecordedRequest) => boolean)): void {
    this.lostReplies.push(typeof match === 'function' ? match : (request: RecordedRequest) => matchesRequest(match, request));
  }

  /**
   * The next matching request is recorded and then held, unanswered, until
   * the returned function is called (a reply on its way: a log follow that
   * connects late).
   */
  holdNext(match: RequestMatch | ((request: RecordedRequest) => boolean)): () => void {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.push({ matches: typeof match === 'function' ? match : (request: RecordedRequest) => matchesRequest(match, request), released });
    return release;
  }

  private takeHold(request: RecordedRequest): Promise<void> | undefined {
    const index = this.holds.findIndex((hold) => hold.matches(request));
    if (index < 0) return undefined;
    return this.holds.splice(index, 1)[0]!.released;
  }

  private takeLostReply(request: RecordedRequest): boolean {
    const index = this.lostReplies.findIndex((matches) => matches(request));
    if (index < 0) return false;
    this.lostReplies.splice(index, 1);
    return true;
  }

  clearRequests(): void {
    this.requests.length = 0;
    this.deletions.length = 0;
  }

  /** Destroys every open watch connection, as a dropped network link would. */
  breakWatches(): number {
    const count = this.watchers.size;
    for (const watcher of this.watchers) watcher.response.socket?.destroy();
    this.watchers.clear();
    return count;
  }

  /** Ends every open watch cleanly, as the API server does when a watch times out. */
  endWatches(): number {
    const count = this.watchers.size;
    for (const watcher of this.watchers) watcher.response.end();
    this.watchers.clear();
    return count;
  }

  /** Forgets the event history: a watch from any older resourceVersion now answers 410. */
  compactHistory(): void {
    this.history = [];
    this.oldestWatchableRevision = this.revision;
    this.expireContinueTokens();
  }

  /** Every paged list under way loses its snapshot: its next `continue` answers 410 Expired, as after an etcd compaction. */
  expireContinueTokens(): void {
    this.pagedLists.clear();
  }

  /** Sends a BOOKMARK with the latest resourceVersion to watches that asked for bookmarks. */
  sendBookmarks(): void {
    for (const watcher of this.watchers) {
      if (!watcher.bookmarks) continue;
      const object = { apiVersion: apiVersionOf(watcher.resource), kind: watcher.resource.kind, metadata: { resourceVersion: this.resourceVersion } };
      watcher.response.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
    }
  }

  /**
   * Stores an object as given (status included), creating or replacing it,
   * and emits ADDED or MODIFIED to watches. Fills uid, creationTimestamp and
   * generation when absent; always assigns a new resourceVersion.
   */
  setObject(input: KubeObject): KubeObject {
    const resource = this.resourceFor(input.apiVersion, input.kind);
    const object = clone(input);
    const { name, namespace } = object.metadata;
    if (!name || resource.namespaced !== (namespace !== undefined)) {
      throw new Error(`setObject: ${resource.kind} needs metadata.name${resource.namespaced ? ' and metadata.namespace' : ' and no namespace'}`);
    }
    const current = this.objects.get(storeKey(resource, namespace, name))?.object;
    object.metadata.uid ??= current?.metadata.uid ?? randomUUID();
    object.metadata.creationTimestamp ??= current?.metadata.creationTimestamp ?? this.timestamp();
    if (resource.tracksGeneration) object.metadata.generation ??= this.nextGeneration(current, object);
    return clone(this.commit(current ? 'MODIFIED' : 'ADDED', resource, object, current));
  }

  getObject(ref: ObjectRef): KubeObject | undefined {
    const resource = this.resourceFor(ref.apiVersion, ref.kind);
    const stored = this.objects.get(storeKey(resource, ref.namespace, ref.name));
    return stored ? clone(stored.object) : undefined;
  }

  listObjects(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    const resource = this.resourceFor(apiVersion, kind);
    return this.select(resource, namespace, [], []).map((object) => clone(object));
  }

  /** Removes an object at once (no finalizers, no garbage collection) and emits DELETED. */
  deleteObject(ref: ObjectRef): boolean {
    const resource = this.resourceFor(ref.apiVersion, ref.kind);
    const stored = this.objects.get(storeKey(resource, ref.namespace, ref.name));
    if (stored) this.commit('DELETED', resource, stored.object, stored.object);
    return stored !== undefined;
  }

  /** The text `GET .../pods/{name}/log` answers; the pod itself must exist too. */
  setPodLog(namespace: string, name: string, text: string, container?: string): void {
    const key = `${namespace}/${name}/${container ?? ''}`;
    const before = this.podLogs.get(key) ?? '';
    this.podLogs.set(key, text);
    // A followed log only grows: what was added goes to every follower.
    const added = text.startsWith(before) ? text.slice(before.length) : text;
    for (const follower of this.logFollowers.get(key) ?? []) if (added !== '') follower.write(added);
  }

  /** Ends every followed log of the pod, as the kubelet does when its container exits. */
  endPodLogs(namespace: string, name: string): number {
    let ended = 0;
    for (const [key, followers] of this.logFollowers) {
      if (!key.startsWith(`${namespace}/${name}/`)) continue;
      for (const follower of followers) follower.end();
      ended += followers.size;
      this.logFollowers.delete(key);
    }
    return ended;
  }

  /** How many followed log streams were ever answered (opened), closed since or not. */
  logFollowsOpened = 0;

  /** How many followed log streams are open now. */
  get openLogFollowers(): number {
    return [...this.logFollowers.values()].reduce((total, followers) => total + followers.size, 0);
  }

  // --- request handling ----------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const recorded = this.record(request, url, await readBody(request));
      this.throwInjectedFailure(recorded);
      if (!this.tokens.has(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '')) throw apiError(401, 'Unauthorized');
      const refusal = this.authorize?.(recorded);
      if (refusal !== undefined) throw apiError(403, refusal, 'Forbidden');
      const held = this.takeHold(recorded);
      if (held !== undefined) await held;
      const lost = this.takeLostReply(recorded);
      // A lost reply: the request is applied, then the connection drops before the answer arrives.
      this.dispatch(recorded, lost ? discardingResponse(response) : response);
      if (lost) response.socket?.destroy();
    } catch (error) {
      const failure = error instanceof ApiError ? error : new ApiError(500, failureStatus(500, String(error)));
      if (response.headersSent) response.destroy();
      else sendJson(response, failure.code, failure.body);
    }
  }

  private record(request: IncomingMessage, url: URL, raw: string): RecordedRequest {
    const query = Object.fromEntries(url.searchParams);
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query,
      contentType: request.headers['content-type'],
      body: parseBody(raw),
      headers: request.headers,
      watch: query.watch === 'true' || query.watch === '1',
    };
    this.requests.push(recorded);
    return recorded;
  }

  private throwInjectedFailure(request: RecordedRequest): void {
    const index = this.failures.findIndex((failure) => failure.matches(request));
    if (index < 0) return;
    const [failure] = this.failures.splice(index, 1);
    throw new ApiError(failure!.code, failure!.body);
  }

  private dispatch(request: RecordedRequest, response: ServerResponse): void {
    const route = this.parseRoute(request.path);
    const method = request.method;
    if (route.subresource === 'log' && method === 'GET') return this.sendPodLog(route, request.query, response);
    if (route.subresource !== undefined && route.subresource !== 'status') throw NO_ROUTE();
    if (route.name === undefined && route.subresource === undefined) {
      if (method === 'GET' && request.watch) return this.watch(route, request.query, response);
      if (method === 'GET') return sendJson(response, 200, this.list(route, request.query));
      if (method === 'POST') return sendJson(response, 201, this.create(route, request));
      if (method === 'DELETE' && route.namespace !== undefined) return sendJson(response, 200, this.deleteCollection(route, request));
    } else if (route.name !== undefined) {
      if (method === 'GET') return sendJson(response, 200, this.mustGet(route));
      if (method === 'PUT') return sendJson(response, 200, this.update(route, request));
      if (method === 'PATCH') return sendJson(response, 200, this.patch(route, request));
      if (method === 'DELETE' && route.subresource === undefined) return sendJson(response, 200, this.delete(route, request));
    }
    throw apiError(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
  }

  private parseRoute(path: string): Route {
    const segments = path
      .split('/')
      .filter((segment) => segment !== '')
      .map(decodeURIComponent);
    const [group, version, rest] =
      segments[0] === 'api' ? ['', segments[1], segments.slice(2)] : segments[0] === 'apis' ? [segments[1], segments[2], segments.slice(3)] : [];
    if (group === undefined || version === undefined || rest === undefined) throw NO_ROUTE();
    const find = (plural: string | undefined) =>
      this.resources.find((resource) => resource.group === group && resource.version === version && resource.plural === plural);
    const namespacedRoute = rest[0] === 'namespaces' && rest.length >= 3 && find(rest[2])?.namespaced === true;
    const [plural, name, subresource, extra] = namespacedRoute ? rest.slice(2) : rest;
    const resource = find(plural);
    const namespace = namespacedRoute ? rest[1] : undefined;
    if (!resource || extra !== undefined) throw NO_ROUTE();
    if (resource.namespaced && namespace === undefined && name !== undefined) throw NO_ROUTE();
    return { resource, namespace, name, subresource };
  }

  private mustGet(route: Route): KubeObject {
    const { resource, namespace, name } = route;
    const stored = this.objects.get(storeKey(resource, namespace, name ?? ''));
    if (!stored) throw notFound(resource, name ?? '');
    return stored.object;
  }

  private select(resource: ResourceDefinition, namespace: string | undefined, labels: Requirement[], fields: Requirement[]): KubeObject[] {
    return [...this.objects.values()]
      .filter((stored) => stored.resource === resource && (namespace === undefined || stored.object.metadata.namespace === namespace))
      .map((stored) => stored.object)
      .filter((object) => this.selects(object, labels, fields))
      .sort((a, b) => storeKey(resource, a.metadata.namespace, a.metadata.name!).localeCompare(storeKey(resource, b.metadata.namespace, b.metadata.name!)));
  }

  private selects(object: KubeObject, labels: Requirement[], fields: Requirement[]): boolean {
    const involved = isRecord(object.involvedObject) ? object.involvedObject : {};
    const fieldValues = {
      'metadata.name': object.metadata.name,
      'metadata.namespace': object.metadata.namespace,
      // Events only, as on a real API server.
      ...(object.kind === 'Event'
        ? {
            'involvedObject.kind': involved.kind as string | undefined,
            'involvedObject.name': involved.name as string | undefined,
            reason: object.reason as string | undefined,
          }
        : {}),
    };
    return satisfies(object.metadata.labels ?? {}, labels) && satisfies(fieldValues, fields);
  }

  /**
   * A list, whole or in pages: with `limit`, the first page keeps a snapshot
   * of the whole list and its resourceVersion, and each `continue` token
   * (`<snapshot>:<offset>`) serves the next page of it, as the API server
   * serves every page at the first page's resourceVersion.
   */
  private list(route: Route, query: Record<string, string>): unknown {
    const { resource, namespace } = route;
    const header = { apiVersion: apiVersionOf(resource), kind: `${resource.kind}List` };
    const limit = query.limit === undefined ? 0 : Number(query.limit);
    if (!Number.isSafeInteger(limit) || limit < 0) throw apiError(400, `invalid limit: ${query.limit}`, 'BadRequest');
    if (query.continue === undefined && limit === 0) {
      const items = this.select(resource, namespace, parseLabelSelector(query.labelSelector), parseFieldSelector(query.fieldSelector));
      return { ...header, metadata: { resourceVersion: this.resourceVersion }, items };
    }
    const [id, from] = query.continue === undefined ? [randomUUID(), 0] : this.continuedList(query.continue);
    if (query.continue === undefined) {
      const items = this.select(resource, namespace, parseLabelSelector(query.labelSelector), parseFieldSelector(query.fieldSelector));
      this.pagedLists.set(id, { items, resourceVersion: this.resourceVersion });
    }
    const snapshot = this.pagedLists.get(id)!;
    const to = limit === 0 ? snapshot.items.length : from + limit;
    const items = snapshot.items.slice(from, to);
    if (to >= snapshot.items.length) {
      this.pagedLists.delete(id);
      return { ...header, metadata: { resourceVersion: snapshot.resourceVersion }, items };
    }
    const metadata = { resourceVersion: snapshot.resourceVersion, continue: `${id}:${to}`, remainingItemCount: snapshot.items.length - to };
    return { ...header, metadata, items };
  }

  /** The snapshot and offset a continue token names; 410 Expired when its snapshot is gone. */
  private continuedList(token: string): [string, number] {
    const [id = '', offset = ''] = token.split(':');
    if (!/^\d+$/.test(offset)) throw apiError(400, `invalid continue token: ${token}`, 'BadRequest');
    if (!this.pagedLists.has(id)) {
      throw apiError(
        410,
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        'Expired',
      );
    }
    return [id, Number(offset)];
  }

  private objectBody(request: RecordedRequest, resource: ResourceDefinition): KubeObject {
    const type = mediaType(request.contentType);
    if (type !== '' && type !== 'application/json')
      throw apiError(415, `the body of the request was in an unknown format - accepted media types include: application/json`);
    if (!isRecord(request.body)) throw apiError(400, `the body of the request is not a ${resource.kind} object`, 'BadRequest');
    const body = clone(request.body);
    return { ...body, metadata: isRecord(body.metadata) ? (body.metadata as ObjectMeta) : {} };
  }

  private checkName(resource: ResourceDefinition, name: string): void {
    const limit = resource.maxNameLength ?? 253;
    if (!NAME_PATTERN.test(name)) {
      throw invalid(
        resource,
        name,
        `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      );
    }
    if (name.length > limit) throw invalid(resource, name, `metadata.name: Invalid value: "${name}": must be no more than ${limit} characters`);
  }

  private create(route: Route, request: RecordedRequest): KubeObject {
    const { resource, namespace } = route;
    if (resource.namespaced && namespace === undefined) throw NO_ROUTE();
    const body = this.objectBody(request, resource);
    if (resource.namespaced && body.metadata.namespace !== undefined && body.metadata.namespace !== namespace) {
      throw apiError(400, 'the namespace of the provided object does not match the namespace sent on the request', 'BadRequest');
    }
    const generated = body.metadata.generateName ? `${body.metadata.generateName}${randomUUID().slice(0, 5)}` : undefined;
    const name = body.metadata.name || generated;
    if (!name) throw invalid(resource, '', 'metadata.name: Required value: name or generateName is required');
    this.checkName(resource, name);
    if (this.objects.has(storeKey(resource, namespace, name))) {
      throw apiError(409, `${qualifiedName(resource)} "${name}" already exists`, 'AlreadyExists', { name, group: resource.group, kind: resource.plural });
    }
    const { resourceVersion: _rv, deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, ...metadata } = body.metadata;
    const object: KubeObject = {
      ...body,
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      metadata: { ...metadata, name, ...(namespace !== undefined ? { namespace } : {}), uid: randomUUID(), creationTimestamp: this.timestamp() },
    };
    if (resource.tracksGeneration) object.metadata.generation = 1;
    if (resource.statusSubresource) this.setStatus(object, resource.initialStatus);
    return this.commit('ADDED', resource, object);
  }

  private update(route: Route, request: RecordedRequest): KubeObject {
    const { resource, name } = route;
    const current = this.mustGet(route);
    const body = this.objectBody(request, resource);
    if (body.metadata.name !== undefined && body.metadata.name !== name) {
      throw apiError(400, `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`, 'BadRequest');
    }
    if (!body.metadata.resourceVersion && resource.customResource) {
      throw invalid(resource, name!, 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    }
    return this.write(resource, current, body, route.subresource);
  }

  private patch(route: Route, request: RecordedRequest): KubeObject {
    const { resource } = route;
    const current = this.mustGet(route);
    const type = mediaType(request.contentType);
    let patched: unknown;
    if (type === 'application/merge-patch+json' || (type === 'application/strategic-merge-patch+json' && !resource.customResource)) {
      patched = mergePatch(current, request.body);
    } else if (type === 'application/json-patch+json') {
      patched = applyJsonPatch(current, request.body);
    } else {
      throw apiError(
        415,
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json${resource.customResource ? '' : ', application/strategic-merge-patch+json'}`,
      );
    }
    if (!isRecord(patched) || !isRecord(patched.metadata)) throw apiError(400, 'the patch does not leave an object with metadata', 'BadRequest');
    return this.write(resource, current, patched as KubeObject, route.subresource);
  }

  /** The common tail of PUT and PATCH: precondition, subresource rules, generation, finalizers. */
  private write(resource: ResourceDefinition, current: KubeObject, incoming: KubeObject, subresource: string | undefined): KubeObject {
    const name = current.metadata.name!;
    const expected = incoming.metadata.resourceVersion;
    if (expected && expected !== current.metadata.resourceVersion) throw conflict(resource, name, STALE);
    const next = subresource === 'status' ? this.withStatusOf(current, incoming) : this.withMainFieldsOf(resource, current, incoming);
    if (isDeepStrictEqual(next, current)) return current;
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.removeNow(resource, next);
      return next;
    }
    return this.commit('MODIFIED', resource, next, current);
  }

  private withStatusOf(current: KubeObject, incoming: KubeObject): KubeObject {
    const next = clone(current);
    this.setStatus(next, incoming.status);
    return next;
  }

  private withMainFieldsOf(resource: ResourceDefinition, current: KubeObject, incoming: KubeObject): KubeObject {
    const kept = ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'resourceVersion'];
    const metadata: ObjectMeta = Object.fromEntries(Object.entries(incoming.metadata).filter(([key]) => !kept.includes(key)));
    for (const key of kept) if (current.metadata[key] !== undefined) metadata[key] = current.metadata[key];
    const next: KubeObject = { ...clone(incoming), apiVersion: apiVersionOf(resource), kind: resource.kind, metadata: clone(metadata) };
    if (resource.statusSubresource) this.setStatus(next, current.status);
    if (resource.tracksGeneration) next.metadata.generation = this.nextGeneration(current, next);
    return next;
  }

  private nextGeneration(current: KubeObject | undefined, next: KubeObject): number {
    if (!current) return 1;
    const generation = current.metadata.generation ?? 1;
    return isDeepStrictEqual(specOf(current), specOf(next)) ? generation : generation + 1;
  }

  private setStatus(object: KubeObject, status: unknown): void {
    if (status === undefined) delete object.status;
    else object.status = clone(status);
  }

  // --- deletion and garbage collection -------------------------------------

  private delete(route: Route, request: RecordedRequest): unknown {
    const { resource, namespace, name } = route;
    const current = this.mustGet(route);
    const options = this.deleteOptions(request);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid !== undefined && uid !== current.metadata.uid) {
      throw conflict(resource, name!, `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${current.metadata.uid}`);
    }
    if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        resource,
        name!,
        `Precondition failed: ResourceVersion in precondition: ${String(resourceVersion)}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const requested = this.requestedPolicy(resource, name!, options);
    const appliedPolicy = requested ?? resource.defaultPropagation;
    const gracePeriodSeconds = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : undefined;
    this.deletions.push({
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      namespace,
      name: name!,
      propagationPolicy: requested,
      appliedPolicy,
      gracePeriodSeconds,
    });
    const remaining = this.deleteWithPolicy(resource, current, appliedPolicy);
    if (remaining || resource.returnsDeletedObject) return remaining ?? current;
    const success: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
    return { ...success, details: { name, group: resource.group, kind: resource.plural, uid: current.metadata.uid } };
  }

  /** deletecollection: every object the label selector picks in the namespace, each deleted as one DELETE would. */
  private deleteCollection(route: Route, request: RecordedRequest): unknown {
    const { resource, namespace } = route;
    const picked = this.select(resource, namespace, parseLabelSelector(request.query.labelSelector), parseFieldSelector(request.query.fieldSelector));
    const items = picked.map((object) => this.delete({ ...route, name: object.metadata.name }, request));
    return { apiVersion: apiVersionOf(resource), kind: `${resource.kind}List`, metadata: {}, items };
  }

  /** Query parameters first, then the DeleteOptions body, which wins (as in the API server). */
  private deleteOptions(request: RecordedRequest): DeleteOptions {
    const { propagationPolicy, gracePeriodSeconds, orphanDependents } = request.query;
    const fromQuery: DeleteOptions = {
      ...(propagationPolicy !== undefined ? { propagationPolicy } : {}),
      ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds: Number(gracePeriodSeconds) } : {}),
      ...(orphanDependents !== undefined ? { orphanDependents: orphanDependents === 'true' } : {}),
    };
    return { ...fromQuery, ...(isRecord(request.body) ? (request.body as DeleteOptions) : {}) };
  }

  private requestedPolicy(resource: ResourceDefinition, name: string, options: DeleteOptions): PropagationPolicy | undefined {
    const policy = options.propagationPolicy ?? (options.orphanDependents === undefined ? undefined : options.orphanDependents ? 'Orphan' : 'Background');
    if (policy === undefined || policy === 'Foreground' || policy === 'Background' || policy === 'Orphan') return policy;
    throw invalid(resource, name, `propagationPolicy: Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan"`);
  }

  /**
   * Answers the object as the API server returns it while a deletion is
   * pending (finalizers, Foreground), undefined when it went at once. Here
   * Foreground completes before the answer, which still shows the object
   * marked for deletion, as a real server's answer would.
   */
  private deleteWithPolicy(resource: ResourceDefinition, object: KubeObject, policy: PropagationPolicy): KubeObject | undefined {
    if (policy === 'Orphan') this.orphanDependentsOf(object);
    if (policy === 'Foreground') {
      const marked = this.markDeleting(resource, object, FOREGROUND_FINALIZER);
      this.deleteDependentsOf(marked);
      return this.dropFinalizer(resource, marked, FOREGROUND_FINALIZER) ?? marked;
    }
    if (object.metadata.finalizers?.length) return this.markDeleting(resource, object);
    this.removeNow(resource, object);
    return undefined;
  }

  private markDeleting(resource: ResourceDefinition, object: KubeObject, finalizer?: string): KubeObject {
    const finalizers = object.metadata.finalizers ?? [];
    const addFinalizer = finalizer !== undefined && !finalizers.includes(finalizer);
    if (object.metadata.deletionTimestamp && !addFinalizer) return object;
    const next = clone(object);
    next.metadata.deletionTimestamp ??= this.timestamp();
    next.metadata.deletionGracePeriodSeconds ??= 0;
    if (addFinalizer) next.metadata.finalizers = [...finalizers, finalizer];
    return this.commit('MODIFIED', resource, next, object);
  }

  private dropFinalizer(resource: ResourceDefinition, object: KubeObject, finalizer: string): KubeObject | undefined {
    const next = clone(object);
    next.metadata.finalizers = (object.metadata.finalizers ?? []).filter((entry) => entry !== finalizer);
    if (next.metadata.finalizers.length > 0) return this.commit('MODIFIED', resource, next, object);
    delete next.metadata.finalizers;
    this.removeNow(resource, next);
    return undefined;
  }

  /** Removes the object, then what the garbage collector would take with it. */
  private removeNow(resource: ResourceDefinition, object: KubeObject): void {
    this.commit('DELETED', resource, object, object);
    if (resource.kind === 'Namespace' && resource.group === '') {
      for (const stored of [...this.objects.values()]) {
        const current = this.objects.get(storeKey(stored.resource, stored.object.metadata.namespace, stored.object.metadata.name!));
        if (current && current.object.metadata.namespace === object.metadata.name) this.removeNow(current.resource, current.object);
      }
    }
    this.deleteDependentsOf(object);
  }

  private dependentsOf(owner: KubeObject): Array<{ resource: ResourceDefinition; object: KubeObject }> {
    return [...this.objects.values()].filter((stored) => stored.object.metadata.ownerReferences?.some((ref) => ref.uid === owner.metadata.uid));
  }

  private deleteDependentsOf(owner: KubeObject): void {
    for (const { resource, object } of this.dependentsOf(owner)) {
      const current = this.objects.get(storeKey(resource, object.metadata.namespace, object.metadata.name!));
      if (current) this.deleteWithPolicy(resource, current.object, 'Background');
    }
  }

  private orphanDependentsOf(owner: KubeObject): void {
    for (const { resource, object } of this.dependentsOf(owner)) {
      const next = clone(object);
      next.metadata.ownerReferences = object.metadata.ownerReferences!.filter((ref) => ref.uid !== owner.metadata.uid);
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      this.commit('MODIFIED', resource, next, object);
    }
  }

  // --- storage, history and watches ----------------------------------------

  private commit(type: ObjectEventType, resource: ResourceDefinition, object: KubeObject, previous?: KubeObject): KubeObject {
    this.revision += 1;
    const stored: KubeObject = { ...object, metadata: { ...object.metadata, resourceVersion: this.resourceVersion } };
    const key = storeKey(resource, stored.metadata.namespace, stored.metadata.name!);
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, { resource, object: stored });
    const event: StoredEvent = { revision: this.revision, type, resource, object: stored, previous };
    this.history.push(event);
    for (const watcher of this.watchers) this.deliver(watcher, event);
    return stored;
  }

  private watch(route: Route, query: Record<string, string>, response: ServerResponse): void {
    const { resource, namespace } = route;
    const from = query.resourceVersion ?? '';
    const revision = from === '' ? 0 : Number(from);
    if (!Number.isSafeInteger(revision) || revision < 0) throw apiError(400, `invalid resource version: ${from}`, 'BadRequest');
    const watcher: Watcher = {
      resource,
      namespace,
      labels: parseLabelSelector(query.labelSelector),
      fields: parseFieldSelector(query.fieldSelector),
      bookmarks: query.allowWatchBookmarks === 'true',
      response,
      info: { path: `/${qualifiedName(resource)}`, namespace, resourceVersion: from, labelSelector: query.labelSelector },
    };
    response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    response.flushHeaders();
    if (revision !== 0 && revision < this.oldestWatchableRevision) {
      const expired = failureStatus(410, `too old resource version: ${revision} (${this.oldestWatchableRevision})`, 'Expired');
      response.end(`${JSON.stringify({ type: 'ERROR', object: expired })}\n`);
      return;
    }
    this.replay(watcher, revision);
    this.watchers.add(watcher);
    response.on('close', () => this.watchers.delete(watcher));
  }

  /** From "" or "0": the current state as ADDED events; otherwise every later event in history. */
  private replay(watcher: Watcher, revision: number): void {
    if (revision === 0) {
      for (const object of this.select(watcher.resource, watcher.namespace, watcher.labels, watcher.fields)) this.writeEvent(watcher, 'ADDED', object);
      return;
    }
    for (const event of this.history) if (event.revision > revision) this.deliver(watcher, event);
  }

  /** A change that moves an object into or out of a watch's selection arrives as ADDED or DELETED. */
  private deliver(watcher: Watcher, event: StoredEvent): void {
    const { object, previous } = event;
    if (event.resource !== watcher.resource) return;
    if (watcher.namespace !== undefined && object.metadata.namespace !== watcher.namespace) return;
    const selectedNow = this.selects(object, watcher.labels, watcher.fields);
    const selectedBefore = previous !== undefined && this.selects(previous, watcher.labels, watcher.fields);
    if (event.type === 'MODIFIED') {
      const type = selectedNow && selectedBefore ? 'MODIFIED' : selectedNow ? 'ADDED' : selectedBefore ? 'DELETED' : undefined;
      if (type) this.writeEvent(watcher, type, object);
    } else if (selectedNow) {
      this.writeEvent(watcher, event.type, object);
    }
  }

  private writeEvent(watcher: Watcher, type: ObjectEventType, object: KubeObject): void {
    watcher.response.write(`${JSON.stringify({ type, object })}\n`);
  }

  private sendPodLog(route: Route, query: Record<string, string>, response: ServerResponse): void {
    const { resource, namespace, name } = route;
    if (resource.kind !== 'Pod' || resource.group !== '') throw NO_ROUTE();
    this.mustGet(route);
    const key = `${namespace}/${name}/`;
    const logKey =
      query.container !== undefined && this.podLogs.has(key + query.container)
        ? key + query.container
        : query.container !== undefined && !this.podLogs.has(key)
          ? key + query.container
          : key;
    let text = this.podLogs.get(logKey) ?? '';
    if (query.tailLines !== undefined) {
      const lines = text.split(/(?<=\n)/);
      text = lines.slice(Math.max(0, lines.length - Number(query.tailLines))).join('');
    }
    if (query.limitBytes !== undefined) text = Buffer.from(text).subarray(0, Number(query.limitBytes)).toString('utf8');
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    if (query.follow !== 'true') {
      response.end(text);
      return;
    }
    response.write(text);
    const followers = this.logFollowers.get(logKey) ?? new Set<ServerResponse>();
    followers.add(response);
    this.logFollowers.set(logKey, followers);
    this.logFollowsOpened += 1;
    response.on('close', () => followers.delete(response));
  }

  private resourceFor(apiVersion: string | undefined, kind: string | undefined): ResourceDefinition {
    const resource = this.resources.find((candidate) => apiVersionOf(candidate) === apiVersion && candidate.kind === kind);
    if (!resource) throw new Error(`FakeKubeApiServer does not serve ${apiVersion} ${kind}`);
    return resource;
  }

  private timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
  }
}
