import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** An nmap report of `hosts` public hosts with `ports` open tcp ports each. */
export function nmapReport(hosts: number, ports: number, firstOctet = 45): string {
  const parts = ['<?xml version="1.0"?>\n<nmaprun scanner="nmap">\n'];
  for (let host = 1; host <= hosts; host++) {
    parts.push(`<host><status state="up"/><address addr="${firstOctet}.${(host >> 16) & 255}.${(host >> 8) & 255}.${host & 255}" addrtype="ipv4"/><ports>`);
    for (let port = 1; port <= ports; port++) parts.push(`<port protocol="tcp" portid="${port}"><state state="open"/></port>`);
    parts.push('</ports></host>\n');
  }
  parts.push('</nmaprun>\n');
  return parts.join('');
}

/** nmapHostsReport's address of host n (1-based): public, outside every special-purpose range. */
export function fixtureHostAddress(n: number): string {
  return `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/**
 * An nmap -sV report of `hosts` hosts, each the real <host> block of a
 * fixture (67 distinct findings) with its own address and name, in pieces as
 * it is written: the header, one piece per host, the footer. Never whole in
 * memory, so a test can make a 25 MB report inside a small heap.
 */
export function* nmapHostsReport(hosts: number, domain: string): Generator<Buffer> {
  const fixture = readFileSync(fileURLToPath(new URL('../fixtures/nmap/defectdojo-nmap-issue4406.xml', import.meta.url)), 'utf8');
  const host = fixture.slice(fixture.indexOf('<host '), fixture.indexOf('</host>') + '</host>'.length);
  yield Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap -sV" version="7.91">\n');
  for (let n = 1; n <= hosts; n++) {
    yield Buffer.from(host.replace(/addr="10\.250\.195\.71"/g, `addr="${fixtureHostAddress(n)}"`).replace(/ip-10-250-195-71[^"]*/g, `host-${n}.${domain}`));
  }
  yield Buffer.from('</nmaprun>\n');
}
