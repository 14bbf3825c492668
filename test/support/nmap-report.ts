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
