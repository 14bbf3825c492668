import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Finding } from '../../src/domain/risks/finding.js';
import { FindingBudget } from '../../src/parsers/finding-bounds.js';
import { createNmapParser } from '../../src/parsers/nmap.js';
import { goldenText, NMAP_GOLDENS, nmapGoldenInputs, parseForGolden } from './nmap-golden-inputs.js';

/**
 * The nmap parser's output, finding for finding and byte for byte as JSON,
 * against goldens written by the parser before issue 17's speed work
 * (commit 59536f2; scripts/write-nmap-goldens.ts says how). Written whole
 * and in small pieces, so that a change to how text is gathered across
 * writes shows too.
 */
describe('nmap parser output is unchanged (goldens)', () => {
  for (const { name, bytes } of nmapGoldenInputs()) {
    it(`gives exactly the pinned findings and hosts for ${name}`, () => {
      const golden = readFileSync(join(NMAP_GOLDENS, `${name}.findings.json`), 'utf8');
      const parsed = JSON.parse(golden) as ReturnType<typeof parseForGolden>;
      const whole = parseForGolden(bytes);
      expect(whole).to.deep.equal(parsed);
      expect(goldenText(bytes)).to.equal(golden);
      for (const chunkSize of [7, 4093]) expect(goldenText(bytes, chunkSize), `written ${chunkSize} bytes at a time`).to.equal(golden);
    });
  }
});

/**
 * The nmap parser tells the budget which findings' texts need no scan for
 * JSON escapes (FindingBudget.add's plainText); the text counted must still
 * be exactly the definitions' JSON, for the real files and for one with a
 * character JSON escapes in every piece a text is built from.
 */
describe("nmap parser counts its findings' text exactly", () => {
  const escapes = new TextEncoder().encode(`<?xml version="1.0"?><nmaprun>
<host><status state="up"/><address addr="10.0.0.1" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="1"><state state="open"/><service name="a&quot;b" product="p" version="v"/></port>
<port protocol="tcp" portid="2"><state state="open"/><service name="n" product="p\\q" version="v"/></port>
<port protocol="tcp" portid="3"><state state="open"/><service name="n" product="p" version="v&#x9;"/></port>
<port protocol="tcp" portid="4"><state state="open"/><service name="n" extrainfo="e&quot;" tunnel="t"/></port>
<port protocol="tcp" portid="5"><state state="open"/><service name="n" tunnel="t\\"/></port>
<port protocol="tcp" portid="6"><state state="open"/><service name="ssh" product="OpenSSH" version="7.4"/><script id="vulners" output=""><table key="cpe:/a:&quot;x"><table><elem key="id">CVE-1</elem><elem key="cvss">5.0</elem><elem key="type">cve</elem></table></table><table key="cpe:/a:y"><table><elem key="id">A"B</elem><elem key="cvss">5.0</elem><elem key="type">cve</elem></table><table><elem key="id">C</elem><elem key="cvss">5\\0</elem><elem key="type">t"</elem></table></table></script></port>
</ports></host>
<host><status state="up"/><address addr="10.0.0.&quot;2" addrtype="ipv4"/><ports><port protocol="tcp" portid="7"><state state="open"/><service name="n"/></port></ports></host>
</nmaprun>`);
  for (const { name, bytes } of [...nmapGoldenInputs(), { name: 'escapes in every piece', bytes: escapes }]) {
    it(`counts the JSON of every definition of ${name}`, () => {
      const budget = new FindingBudget();
      const findings: Finding[] = [];
      const parser = createNmapParser('NMAP', { add: (batch) => findings.push(...batch) }, budget);
      parser.write(bytes);
      findings.push(...parser.end().findings);
      expect(budget.countedBytes).to.equal(findings.reduce((sum, finding) => sum + JSON.stringify(finding.definition).length, 0));
      if (name === 'escapes in every piece') expect(findings.length).to.equal(10);
    });
  }
});
