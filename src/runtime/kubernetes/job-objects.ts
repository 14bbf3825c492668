/**
 * The Kubernetes objects the scanner Job builders write, in
 * @kubernetes/client-node's own types (V1Job, V1Container, …), each narrowed
 * to say which of its optional fields Vigil's builders always set, so that
 * what reads a built Job (the runner, the tests) needs no checks for fields
 * that are never missing. No copies of the API's shapes are kept here.
 */
import type {
  V1Affinity,
  V1Capabilities,
  V1Container,
  V1EnvVar,
  V1Job,
  V1JobSpec,
  V1ObjectMeta,
  V1OwnerReference,
  V1PodSecurityContext,
  V1PodSpec,
  V1PodTemplateSpec,
  V1ResourceRequirements,
  V1Secret,
  V1SecurityContext,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from './client-node.js';

/** T with the fields K always set. */
type With<T, K extends keyof T> = Omit<T, K> & Required<Pick<T, K>>;

export type OwnerReference = With<V1OwnerReference, 'controller' | 'blockOwnerDeletion'>;

export type ObjectMeta = With<V1ObjectMeta, 'name' | 'namespace' | 'labels'> & { ownerReferences: OwnerReference[] };

export type EnvVar = V1EnvVar;

export type ResourceRequirements = V1ResourceRequirements;

export type SecurityContext = With<V1SecurityContext, 'allowPrivilegeEscalation' | 'readOnlyRootFilesystem' | 'runAsNonRoot'> & {
  capabilities: With<V1Capabilities, 'drop'>;
};

export type PodSecurityContext = With<V1PodSecurityContext, 'runAsNonRoot' | 'runAsUser' | 'runAsGroup' | 'fsGroup' | 'seccompProfile'>;

export type VolumeMount = V1VolumeMount;

export type Container = With<V1Container, 'image' | 'args' | 'resources'> & { securityContext: SecurityContext; volumeMounts: VolumeMount[] };

export type Volume = V1Volume;

export type Toleration = V1Toleration;

export type Affinity = V1Affinity;

export type PodSpec = With<V1PodSpec, 'restartPolicy' | 'serviceAccountName' | 'automountServiceAccountToken' | 'enableServiceLinks'> & {
  securityContext: PodSecurityContext;
  initContainers: Container[];
  containers: Container[];
  volumes: Volume[];
};

export type Job = Omit<V1Job, 'apiVersion' | 'kind' | 'metadata' | 'spec' | 'status'> & {
  apiVersion: 'batch/v1';
  kind: 'Job';
  metadata: ObjectMeta;
  spec: With<V1JobSpec, 'backoffLimit' | 'activeDeadlineSeconds'> & {
    template: Omit<V1PodTemplateSpec, 'metadata' | 'spec'> & { metadata: With<V1ObjectMeta, 'labels' | 'annotations'>; spec: PodSpec };
  };
};

export type Secret = Omit<V1Secret, 'apiVersion' | 'kind' | 'metadata'> &
  With<V1Secret, 'type' | 'immutable' | 'stringData'> & {
    apiVersion: 'v1';
    kind: 'Secret';
    metadata: ObjectMeta;
  };
