/**
 * The Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards,
 * as Pod Security admission enforces them from 1.25) for the fields Vigil's
 * pods set: the strictest level a pod spec satisfies.
 */
export type PodSecurityLevel = 'restricted' | 'baseline' | 'privileged';

interface ContainerLike {
  name: string;
  securityContext?: {
    privileged?: boolean;
    allowPrivilegeEscalation?: boolean;
    runAsNonRoot?: boolean;
    runAsUser?: number;
    capabilities?: { add?: string[]; drop?: string[] };
    seccompProfile?: { type: string };
  };
  ports?: Array<{ hostPort?: number }>;
}

export interface PodSpecLike {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: ContainerLike[];
  initContainers?: ContainerLike[];
  volumes?: Array<Record<string, unknown>>;
}

/** Capabilities baseline allows to add: the container runtimes' defaults, without NET_RAW. */
const BASELINE_CAPABILITIES = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];
const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];

const containersOf = (pod: PodSpecLike) => [...(pod.initContainers ?? []), ...pod.containers];

/** Every baseline violation, each a sentence naming the container. */
export function baselineViolations(pod: PodSpecLike): string[] {
  const problems: string[] = [];
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push('host namespaces are shared');
  if ((pod.volumes ?? []).some((volume) => 'hostPath' in volume)) problems.push('a hostPath volume is mounted');
  for (const container of containersOf(pod)) {
    const context = container.securityContext ?? {};
    if (context.privileged) problems.push(`${container.name} is privileged`);
    const extra = (context.capabilities?.add ?? []).filter((capability) => !BASELINE_CAPABILITIES.includes(capability));
    if (extra.length > 0) problems.push(`${container.name} adds ${extra.join(', ')}`);
    if ((container.ports ?? []).some((port) => port.hostPort)) problems.push(`${container.name} uses a host port`);
    if (context.seccompProfile?.type === 'Unconfined') problems.push(`${container.name} runs without seccomp`);
  }
  return problems;
}

/** Every violation of restricted beyond baseline's, each a sentence naming the container. */
export function restrictedViolations(pod: PodSpecLike): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  const volumeTypes = (pod.volumes ?? []).map((volume) => Object.keys(volume).find((key) => key !== 'name')!);
  for (const type of volumeTypes.filter((type) => !RESTRICTED_VOLUMES.includes(type))) problems.push(`a ${type} volume is mounted`);
  if (podContext.runAsUser === 0) problems.push('the pod runs as uid 0');
  for (const container of containersOf(pod)) {
    const context = container.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false) problems.push(`${container.name} may escalate privileges`);
    if (!(context.runAsNonRoot ?? podContext.runAsNonRoot)) problems.push(`${container.name} may run as root`);
    if (context.runAsUser === 0) problems.push(`${container.name} runs as uid 0`);
    if (!['RuntimeDefault', 'Localhost'].includes((context.seccompProfile ?? podContext.seccompProfile)?.type ?? ''))
      problems.push(`${container.name} has no seccomp profile`);
    if (!(context.capabilities?.drop ?? []).includes('ALL')) problems.push(`${container.name} does not drop ALL capabilities`);
    const added = (context.capabilities?.add ?? []).filter((capability) => capability !== 'NET_BIND_SERVICE');
    if (added.length > 0) problems.push(`${container.name} adds ${added.join(', ')}`);
  }
  return problems;
}

export function podSecurityLevel(pod: PodSpecLike): PodSecurityLevel {
  if (baselineViolations(pod).length > 0) return 'privileged';
  return restrictedViolations(pod).length > 0 ? 'baseline' : 'restricted';
}
