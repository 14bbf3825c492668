/** A host's IPv4 addresses as the scan rules read them: an address literal is itself, a name is asked of DNS. */
import type { Resolution } from '../domain/scans/resolve-targets.js';
import type { HostResolver } from './ports.js';

export async function resolveHost(resolver: HostResolver, host: string): Promise<Resolution> {
  if (/^[\d.]+$/.test(host)) return { ok: true, addresses: [host] };
  try {
    return { ok: true, addresses: await resolver.resolve4(host) };
  } catch (error) {
    return { ok: false, error: (error as { code?: string }).code ?? (error as Error).message };
  }
}
