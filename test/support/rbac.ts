/**
 * Kubernetes RBAC as the API server's authorizer applies it, for checking
 * rendered ClusterRoles, Roles and their bindings against the requests the
 * operator really makes on the fake API server.
 */
import type { RecordedRequest } from './fake-kube-apiserver.js';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** What RBAC decides on: API group, resource (with subresource), verb, and the namespace when the request names one. */
export interface Permission {
  group: string;
  resource: string;
  verb: string;
  namespace: string | undefined;
}

interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

function verbOf(method: string, watch: boolean, isCollection: boolean): string {
  if (watch) return 'watch';
  switch (method) {
    case 'GET':
      return isCollection ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PATCH':
      return 'patch';
    case 'PUT':
      return 'update';
    default:
      return isCollection ? 'deletecollection' : 'delete';
  }
}

export function permissionOf(request: Pick<RecordedRequest, 'method' | 'path' | 'watch'>): Permission {
  const parts = request.path.split('/').filter(Boolean);
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1]!, parts.slice(3)];
  const namespace = rest[0] === 'namespaces' && rest.length > 2 ? rest[1] : undefined;
  const [resource, name, subresource] = namespace === undefined ? rest : rest.slice(2);
  return {
    group,
    resource: subresource === undefined ? resource! : `${resource}/${subresource}`,
    verb: verbOf(request.method, request.watch, name === undefined),
    namespace,
  };
}

export const describePermission = (permission: Permission): string =>
  `${permission.group || 'core'} ${permission.resource} ${permission.verb} ${permission.namespace === undefined ? '(all namespaces)' : `in ${permission.namespace}`}`;

const ruleAllows = (rule: Rule, permission: Permission): boolean =>
  rule.apiGroups.includes(permission.group) && rule.resources.includes(permission.resource) && rule.verbs.includes(permission.verb);

/** The permissions of one ServiceAccount under a set of rendered RBAC objects. */
export class Authorizer {
  private readonly clusterRules: Rule[] = [];
  private readonly namespaceRules = new Map<string, Rule[]>();

  constructor(objects: readonly RbacObject[], serviceAccount: { name: string; namespace: string }) {
    const roles = (kind: string, namespace?: string) => (name: string) =>
      objects.find((object) => object.kind === kind && object.metadata.name === name && object.metadata.namespace === namespace)?.rules ?? [];
    const boundHere = (binding: RbacObject) =>
      (binding.subjects ?? []).some(
        (subject) => subject.kind === 'ServiceAccount' && subject.name === serviceAccount.name && subject.namespace === serviceAccount.namespace,
      );
    for (const binding of objects.filter(boundHere)) {
      if (binding.kind === 'ClusterRoleBinding') this.clusterRules.push(...roles('ClusterRole')(binding.roleRef!.name));
      if (binding.kind === 'RoleBinding') {
        const namespace = binding.metadata.namespace!;
        const found = binding.roleRef!.kind === 'ClusterRole' ? roles('ClusterRole')(binding.roleRef!.name) : roles('Role', namespace)(binding.roleRef!.name);
        this.namespaceRules.set(namespace, [...(this.namespaceRules.get(namespace) ?? []), ...found]);
      }
    }
  }

  /** Cluster-wide rules allow in every namespace; a Role's rules only in its own, and never a request across all namespaces. */
  allows(permission: Permission): boolean {
    if (this.clusterRules.some((rule) => ruleAllows(rule, permission))) return true;
    return permission.namespace !== undefined && (this.namespaceRules.get(permission.namespace) ?? []).some((rule) => ruleAllows(rule, permission));
  }

  /** The fake API server's `authorize` hook: a sentence like the API server's for a refused request. */
  readonly authorize = (request: RecordedRequest): string | undefined => {
    const permission = permissionOf(request);
    if (this.allows(permission)) return undefined;
    const where = permission.namespace === undefined ? 'at the cluster scope' : `in the namespace "${permission.namespace}"`;
    return `${permission.resource} is forbidden: User "system:serviceaccount:vigil:vigil" cannot ${permission.verb} resource "${permission.resource}" in API group "${permission.group}" ${where}`;
  };
}
