/**
 * Stand-in for nuclei v3 on the points Vigil depends on: templates come only
 * from -t (the real one installs them from GitHub during its update check,
 * which -duc turns off; offline that ends in "no templates provided for
 * scan", exit 1); names resolve from the hosts file in $HOSTS_PATH first, as
 * fastdialer does, then DNS; findings are JSON Lines with the address used.
 * Each template file (*.yaml) under -t matches every target that answers.
 */
'use strict';
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { getAt, option, readHostsFile, resolveHost } = require('./common.cjs');

function templatesIn(dir) {
  if (dir === undefined || !existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).filter((file) => String(file).endsWith('.yaml'));
}

function finding(template, target, url, ip) {
  const id = String(template)
    .replace(/\.yaml$/, '')
    .split('/')
    .at(-1);
  return {
    template: String(template),
    'template-id': id,
    info: {
      name: `Stand-in ${id}`,
      author: ['vigil'],
      tags: ['misconfig'],
      description: 'Matched by the stand-in nuclei.',
      reference: null,
      severity: 'medium',
    },
    type: 'http',
    host: target,
    'matched-at': url,
    ip,
    timestamp: '2026-11-25T00:00:00.000000+00:00',
    'matcher-status': true,
  };
}

async function main(argv) {
  const templates = templatesIn(option(argv, '-t'));
  if (templates.length === 0) {
    console.error('[FTL] Could not run nuclei: no templates provided for scan');
    return 1;
  }
  if (!argv.includes('-duc')) console.error('[ERR] Could not check for nuclei-templates updates: no network');
  const hosts = readHostsFile(process.env.HOSTS_PATH);
  const targets = readFileSync(option(argv, '-l'), 'utf8').split('\n').filter(Boolean);
  const lines = [];
  for (const target of targets) {
    const url = /^https?:\/\//.test(target) ? target : `http://${target}/`;
    let ip;
    try {
      ip = await resolveHost(new URL(url).hostname, hosts, false);
      await getAt(url, ip);
    } catch (error) {
      console.error(`[WRN] ${target}: ${error.message}`);
      continue;
    }
    for (const template of templates) lines.push(JSON.stringify(finding(template, target, url, ip)));
  }
  writeFileSync(option(argv, '-o'), lines.map((line) => `${line}\n`).join(''));
  console.log(JSON.stringify({ duration: '0:00:01', percent: '100', requests: '1', total: '1' }));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error.stack);
    process.exit(1);
  },
);
