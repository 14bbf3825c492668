/**
 * Shared by the stand-in scanners: name resolution the way each real
 * scanner does it (a hosts file first, then DNS), and one HTTP GET to a
 * resolved address with the name kept in the Host header.
 */
'use strict';
const { readFileSync, existsSync } = require('node:fs');
const dns = require('node:dns/promises');
const http = require('node:http');

/** Lines `address name...` of a hosts file, as a map from name to addresses. */
function readHostsFile(path) {
  const table = new Map();
  if (path === undefined || !existsSync(path)) return table;
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const [address, ...names] = raw.replace(/#.*/, '').trim().split(/\s+/);
    if (!address) continue;
    for (const name of names) table.set(name.toLowerCase(), [...(table.get(name.toLowerCase()) ?? []), address]);
  }
  return table;
}

/** An IP literal as is, else the hosts file; `exclusive` (the JDK's jdk.net.hosts.file) never falls back to DNS. */
async function resolveHost(host, hosts, exclusive) {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return host;
  const pinned = hosts.get(host.toLowerCase());
  if (pinned !== undefined) return pinned[0];
  if (exclusive) throw new Error(`UnknownHostException: ${host}`);
  return (await dns.lookup(host, { family: 4 })).address;
}

/** GET url at `address`, Host header from the URL (and any extra headers); resolves with the status code. */
function getAt(url, address, extraHeaders = {}) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = http.request(
      { host: address, port: target.port || 80, path: `${target.pathname}${target.search}`, headers: { ...extraHeaders, host: target.host }, timeout: 10_000 },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end();
  });
}

/** The value after `flag` in argv, or the `flag=value` form. */
function option(argv, flag) {
  const index = argv.indexOf(flag);
  if (index >= 0) return argv[index + 1];
  const joined = argv.find((arg) => arg.startsWith(`${flag}=`));
  return joined === undefined ? undefined : joined.slice(flag.length + 1);
}

const FIXTURES = `${__dirname}/../../fixtures`;

module.exports = { readHostsFile, resolveHost, getAt, option, FIXTURES };
