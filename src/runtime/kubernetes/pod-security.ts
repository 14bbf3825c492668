/**
 * The security contexts of scanner pods and containers (moved from
 * job-manifest.ts).
 */
import type { PodSecurityContext, SecurityContext } from './job-objects.js';

/** The uid and gid every scanner container runs as, unless it needs a capability. */
export const SCANNER_USER = 65532;

/**
 * Nothing runs privileged, escalates, writes its root filesystem or keeps a
 * capability it did not ask for.
 *
 * A container that asks for capabilities (NMAP_UDP: NET_RAW for raw UDP
 * sockets) runs as root. Kubernetes has no ambient capabilities: capabilities
 * added to a non-root container stay out of its effective set, and file
 * capabilities cannot help because allowPrivilegeEscalation: false sets
 * no_new_privs. Root here is still confined: every other capability is
 * dropped, the root filesystem is read-only and seccomp is RuntimeDefault.
 * Baseline does not allow adding NET_RAW, so such pods need the Pod Security
 * "privileged" level (test/chart/pod-security.test.ts computes it).
 */
export function containerSecurityContext(capabilities: readonly string[] = []): SecurityContext {
  const base = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true };
  if (capabilities.length === 0) return { ...base, runAsNonRoot: true, capabilities: { drop: ['ALL'] } };
  return { ...base, runAsNonRoot: false, runAsUser: 0, capabilities: { drop: ['ALL'], add: [...capabilities] } };
}

export function podSecurityContext(): PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: SCANNER_USER,
    runAsGroup: SCANNER_USER,
    // The emptyDirs become group-writable by this group: every container, root or not, shares the files.
    fsGroup: SCANNER_USER,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
