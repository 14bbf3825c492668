/**
 * The subset of the Kubernetes API the scanner Job builders write, kept as
 * plain interfaces so that the builders stay free of the client library
 * (moved from job-manifest.ts).
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences: OwnerReference[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string; optional?: boolean } };
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface SeccompProfile {
  type: 'RuntimeDefault' | 'Localhost' | 'Unconfined';
}

export interface SecurityContext {
  allowPrivilegeEscalation: boolean;
  readOnlyRootFilesystem: boolean;
  runAsNonRoot: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  capabilities: { drop: string[]; add?: string[] };
  seccompProfile?: SeccompProfile;
}

export interface PodSecurityContext {
  runAsNonRoot: boolean;
  runAsUser: number;
  runAsGroup: number;
  fsGroup: number;
  seccompProfile: SeccompProfile;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  env?: EnvVar[];
  resources: ResourceRequirements;
  securityContext: SecurityContext;
  volumeMounts: VolumeMount[];
}

export interface Volume {
  name: string;
  emptyDir?: { sizeLimit?: string };
  secret?: { secretName: string; defaultMode?: number };
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface PodSpec {
  restartPolicy: 'Never';
  serviceAccountName: string;
  automountServiceAccountToken: boolean;
  enableServiceLinks: boolean;
  securityContext: PodSecurityContext;
  initContainers: Container[];
  containers: Container[];
  volumes: Volume[];
  imagePullSecrets?: Array<{ name: string }>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

export interface Job {
  apiVersion: 'batch/v1';
  kind: 'Job';
  metadata: ObjectMeta;
  spec: {
    backoffLimit: number;
    activeDeadlineSeconds: number;
    ttlSecondsAfterFinished: number;
    template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: PodSpec };
  };
}

export interface Secret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: ObjectMeta;
  type: 'Opaque';
  immutable: boolean;
  stringData: Record<string, string>;
}

