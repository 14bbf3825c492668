import { lookup } from 'node:dns/promises';
import type { HostResolver } from '../app/ports.js';

/** The system resolver (what the scanner itself would use), IPv4 only. */
export const systemResolver: HostResolver = {
  async resolve4(host: string): Promise<string[]> {
    const addresses = await lookup(host, { all: true, family: 4 });
    return [...new Set(addresses.map((entry) => entry.address))];
  },
};
