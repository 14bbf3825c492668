/**
 * The inputs whose nmap findings are pinned by test/fixtures/nmap/expected/
 * (scripts/write-nmap-goldens.ts writes them, test/parsers/nmap-golden.test.ts
 * compares): every real file in test/fixtures/nmap, the benchmark's file
 * (one real host repeated with distinct addresses, bench/ingest.ts) built
 * small, and one synthetic report that reaches the branches the real files
 * do not (a user-typed name, entities and CDATA, long script output, bounds
 * that cut, vulners entries without an id or score, a port listed twice).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Finding, ParseResult } from '../../src/domain/risks/finding.js';
import { createNmapParser } from '../../src/parsers/nmap.js';

export const NMAP_FIXTURES = new URL('../fixtures/nmap/', import.meta.url).pathname;
export const NMAP_GOLDENS = join(NMAP_FIXTURES, 'expected');

export interface GoldenInput {
  name: string;
  bytes: Buffer;
}

export function nmapGoldenInputs(): GoldenInput[] {
  const real = readdirSync(NMAP_FIXTURES)
    .filter((name) => name.endsWith('.xml') && statSync(join(NMAP_FIXTURES, name)).isFile())
    .sort()
    .map((name) => ({ name, bytes: readFileSync(join(NMAP_FIXTURES, name)) }));
  return [
    ...real,
    { name: 'bench-repeated-host.xml', bytes: Buffer.from(benchRepeatedHost(5)) },
    { name: 'synthetic-edge-cases.xml', bytes: Buffer.from(syntheticEdgeCases()) },
  ];
}

/** Everything the parser hands out, in the order it hands it out: the sink's batches, then what end() returns. */
export function parseForGolden(bytes: Uint8Array, chunkSize = bytes.length): { sunk: Finding[]; result: ParseResult } {
  const sunk: Finding[] = [];
  const parser = createNmapParser('NMAP', { add: (batch) => sunk.push(...batch) });
  for (let offset = 0; offset < bytes.length; offset += chunkSize) parser.write(bytes.subarray(offset, offset + chunkSize));
  return { sunk, result: parser.end() };
}

export function goldenText(bytes: Uint8Array, chunkSize?: number): string {
  return `${JSON.stringify(parseForGolden(bytes, chunkSize), null, 1)}\n`;
}

/** bench/ingest.ts's buildNmap, for `hosts` copies instead of 25 MB. */
function benchRepeatedHost(hosts: number): string {
  const source = readFileSync(join(NMAP_FIXTURES, 'defectdojo-nmap-issue4406.xml'), 'utf8');
  const host = source.slice(source.indexOf('<host '), source.indexOf('</host>') + '</host>'.length);
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap -sV" version="7.91">\n'];
  for (let n = 1; n <= hosts; n++) {
    const address = `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    parts.push(host.replace(/addr="10\.250\.195\.71"/g, `addr="${address}"`).replace(/ip-10-250-195-71[^"]*/g, `host-${n}.bench.example.com`), '\n');
  }
  parts.push('</nmaprun>\n');
  return parts.join('');
}

function vulnersTable(entries: Array<Record<string, string>>): string {
  return entries
    .map(
      (entry) =>
        `<table>\n${Object.entries(entry)
          .map(([key, value]) => `<elem key="${key}">${value}</elem>`)
          .join('\n')}\n</table>`,
    )
    .join('\n');
}

function syntheticEdgeCases(): string {
  const longOutput = `line one&#xa;${'  wrapped\t\tstatus   text &amp; more  &#xa;'.repeat(700)}`;
  const manyScripts = Array.from({ length: 30 }, (_, n) => `<script id="script-${n}" output="${'x'.repeat(2500)} &lt;${n}&gt;"/>`).join('');
  const someLongScripts = Array.from({ length: 10 }, (_, n) => `<script id="long-${n}" output="${'y'.repeat(5000)}"/>`).join('');
  const longProduct = 'Very Long Product '.repeat(40);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment before the root -->
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -sV --script vulners">
<scaninfo type="syn" protocol="tcp"/>
<host><status state="up"/>
<address addr="192.0.2.10" addrtype="ipv4"/><address addr="00:11:22:33:44:55" addrtype="mac" vendor="Acme &amp; Co"/>
<hostnames><hostname name="ptr.example.net" type="PTR"/><hostname name="app.example.com" type="user"/></hostnames>
<ports>
<extraports state="closed" count="990"/>
<port protocol="tcp" portid="443"><state state="open"/><service name="https" product="nginx" version="1.18.0" extrainfo="Ubuntu&#x9; Linux" tunnel="ssl" method="probed"><cpe> cpe:/a:igor_sysoev:nginx:1.18.0 </cpe><cpe>cpe:/o:linux:linux_kernel</cpe></service>
<script id="ssl-cert" output="${longOutput}"><table key="subject"><elem key="commonName">app.example.com</elem></table></script>
<script id="vulners" output="cpe:/a:igor_sysoev:nginx:1.18.0:&#xa;  CVE-2021-23017 7.5"><table key="cpe:/a:igor_sysoev:nginx:1.18.0">
${vulnersTable([
  { cvss: '7.5', id: 'CVE-2021-23017', is_exploit: 'false', type: 'cve' },
  { cvss: ' 9.8 ', id: 'cve-2022-41741', is_exploit: 'true', type: 'cve' },
  { cvss: '6.8', id: 'SSV:92973', is_exploit: 'true', type: 'seebug' },
  { cvss: 'n/a', id: 'EDB-ID:12345', is_exploit: 'false', type: 'exploitdb' },
  { cvss: '11', id: 'PACKETSTORM:1', type: 'packetstorm' },
  { cvss: '5.0', is_exploit: 'false', type: 'cve' },
  { id: '1337DAY-ID-1' },
  { cvss: '4.3', id: '<![CDATA[CVE-2019-20372]]>', is_exploit: 'false', type: 'cve' },
  { cvss: '0.0', id: ' CVE-2020-0001\n', is_exploit: 'false', type: '' },
])}
</table></script></port>
<port protocol="udp" portid="161"><state state="open|filtered"/><service name="snmp" method="table"/></port>
<port protocol="udp" portid="53"><state state="open"/><service name="domain" method="table"/></port>
<port protocol="sctp" portid="38412"><state state="open"/></port>
<port protocol="tcp" portid="8080"><state state="open"/><service name="http-proxy" product="${longProduct}" version="2.0"/>${manyScripts}</port>
<port protocol="tcp" portid="8443"><state state="open"/><service name="https-alt" version="1"/>${someLongScripts}</port>
<port protocol="tcp" portid="22"><state state="open"/><service name="ssh" product="OpenSSH" version="8.2p1 Ubuntu 4ubuntu0.5"/><script id="vulners" output=""><table key="cpe:/a:openbsd:openssh:8.2p1"><table><elem key="id">CVE-2020-15778</elem><elem key="cvss">6.8</elem><elem key="type">cve</elem></table></table><table key="other"><table><elem key="id">CVE-2021-41617</elem><elem key="cvss">4.4</elem><elem key="type">cve</elem></table></table></script></port>
<port protocol="tcp" portid="22"><state state="open"/><service name="ssh"/></port>
<port protocol="tcp" portid="25"><state state="closed"/><service name="smtp"/></port>
</ports>
<os><osmatch name="Linux 4.15" accuracy="95"/><osmatch name="Linux 5.4" accuracy="98"/><osmatch name="" accuracy="99"/></os>
</host>
<host><status state="down"/><address addr="192.0.2.11" addrtype="ipv4"/><ports><port protocol="tcp" portid="80"><state state="open"/></port></ports></host>
<host><status state="up"/><address addr="2001:db8::5" addrtype="ipv6"/><hostnames><hostname name="v6.example.org" type="PTR"/></hostnames>
<ports><port protocol="tcp" portid="80"><state state="open"/><service name="http" product="Apache httpd" version="2.4.41" method="probed"/><script id="vulners" output="x"><table key="cpe:/a:apache:http_server:2.4.41">${vulnersTable([{ cvss: '9.8', id: 'CVE-2021-44790', is_exploit: 'false', type: 'cve' }])}</table></script></port></ports></host>
<host><status state="up"/><hostnames><hostname name="only-a-name.example" type="user"/></hostnames><ports><port protocol="tcp" portid="21"><state state="open"/><service name="ftp" product="vsftpd"/></port></ports></host>
<host><status state="up"/><address addr="192.0.2.10" addrtype="ipv4"/><hostnames><hostname name="other.example.com" type="user"/></hostnames><ports><port protocol="tcp" portid="443"><state state="open"/><service name="https"/></port></ports><os><osmatch name="FreeBSD 13" accuracy="90"/></os></host>
<host><status state="up"/><address addr="192.0.2.12" addrtype="ipv4"/><ports><port protocol="tcp" portid="3306"><state state="open"/><service name="mysql" product="" version="5.7" extrainfo=""/><script id="vulners" output=""><table key="cpe:/a:mysql:mysql:5.7"><table><elem key="id">CVE-2016-6662</elem><elem key="cvss">10.0</elem><elem key="is_exploit">true</elem></table></table></script></port></ports></host>
<runstats><finished time="1"/><hosts up="5" down="1" total="6"/></runstats>
</nmaprun>
`;
}
