/**
 * Stand-in for sslyze 6 on the points Vigil depends on (sslyze/__main__.py,
 * cli/server_string_parser.py): `host:port{ip}` connects to ip and keeps
 * host; a name without {ip} is resolved with DNS and, when it does not
 * resolve, listed in invalid_server_strings; an endpoint that refuses the
 * connection is a connectivity ERROR. The JSON is written first; then,
 * unless --mozilla_config=disable, the Mozilla check runs and the weak
 * server fails it: exit 1.
 * Every reachable server answers as the weak TLS 1.0 server of the
 * tls-v1-0.badssl.com fixture.
 */
'use strict';
const net = require('node:net');
const { readFileSync, writeFileSync } = require('node:fs');
const { option, resolveHost, FIXTURES } = require('./common.cjs');

const WEAK = JSON.parse(readFileSync(`${FIXTURES}/sslyze/securecodebox-sslyze-tls-v1-0.badssl.com_1010.json`, 'utf8')).server_scan_results[0];

function parseServerString(text) {
  const match = /^([^:{}]+):(\d+)(?:\{([^}]+)\})?$/.exec(text);
  if (!match) return undefined;
  return { host: match[1], port: Number(match[2]), ip: match[3] };
}

function reachable(address, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, timeout: 5000 }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function location(server, ip) {
  return { ...WEAK.server_location, hostname: server.host, ip_address: ip, port: server.port };
}

async function scanServer(server, invalid) {
  let ip = server.ip;
  if (ip === undefined) {
    try {
      ip = await resolveHost(server.host, new Map(), false);
    } catch {
      invalid.push({ server_string: `${server.host}:${server.port}`, error_message: 'Could not resolve hostname' });
      return undefined;
    }
  }
  if (!(await reachable(ip, server.port))) {
    return {
      ...WEAK,
      server_location: location(server, ip),
      connectivity_status: 'ERROR',
      connectivity_error_trace: `Traceback (most recent call last):\nsslyze.errors.ConnectionToServerFailed: ${ip}:${server.port} -> "Connection rejected"\n`,
      connectivity_result: null,
      scan_status: 'ERROR_NO_CONNECTIVITY',
      scan_result: null,
    };
  }
  return { ...WEAK, server_location: location(server, ip), network_configuration: { ...WEAK.network_configuration, tls_server_name_indication: server.host } };
}

async function main(argv) {
  const jsonOut = option(argv, '--json_out');
  const mozilla = option(argv, '--mozilla_config') ?? 'intermediate';
  const servers = argv.filter((arg) => !arg.startsWith('--'));
  const invalid = [];
  const results = [];
  for (const text of servers) {
    const server = parseServerString(text);
    if (server === undefined) invalid.push({ server_string: text, error_message: 'Not a valid host:port' });
    else {
      const result = await scanServer(server, invalid);
      if (result !== undefined) results.push(result);
    }
  }
  const report = {
    invalid_server_strings: invalid,
    server_scan_results: results,
    date_scans_started: '2026-11-25T00:00:00',
    date_scans_completed: '2026-11-25T00:00:05',
    sslyze_version: '6.1.0',
    sslyze_url: 'https://github.com/nabla-c0d3/sslyze',
  };
  if (jsonOut !== undefined) writeFileSync(jsonOut, JSON.stringify(report));
  const completed = results.filter((result) => result.connectivity_status === 'COMPLETED');
  if (results.every((result) => result.connectivity_status === 'ERROR')) return 0;
  if (mozilla === 'disable') {
    console.log('    Disabled; use --mozilla_config={old, intermediate, modern}.');
    return 0;
  }
  for (const result of completed) console.log(`    ${result.server_location.hostname}:${result.server_location.port}: FAILED - Not compliant.`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error.stack);
    process.exit(1);
  },
);
