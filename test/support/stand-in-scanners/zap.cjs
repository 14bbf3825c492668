/**
 * Stand-in for `zap.sh -cmd -autorun plan.yaml` (zaproxy 2.16 automation
 * add-on) on the points Vigil depends on: a requestor or spider URL that
 * answers other than 200 is a plan warning, one that cannot be reached an
 * error; with -cmd -autorun ZAP exits 1 on errors, 2 on warnings, else 0,
 * unless an exitStatus job sets other values (ExitStatusJob). The JVM
 * resolves names only from the file in -Djdk.net.hosts.file when
 * JAVA_TOOL_OPTIONS sets it. The report job writes a Traditional JSON report
 * with one alert per site reached. The replacer job's req_header rules are
 * sent with every later request whose URL matches the rule (as ZAP's
 * replacer does), and the openapi job requests each GET operation of its
 * apiFile at targetUrl, with path parameters filled in.
 */
'use strict';
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { parse } = require('yaml');
const { getAt, option, readHostsFile, resolveHost } = require('./common.cjs');

const ALERT = {
  pluginid: '10020',
  alertRef: '10020-1',
  alert: 'Missing Anti-clickjacking Header',
  name: 'Missing Anti-clickjacking Header',
  riskcode: '2',
  confidence: '2',
  riskdesc: 'Medium (Medium)',
  desc: '<p>The response does not protect against ClickJacking attacks.</p>',
  count: '1',
  solution: '<p>Set Content-Security-Policy frame-ancestors or X-Frame-Options.</p>',
  reference: '',
  cweid: '1021',
  wascid: '15',
  sourceid: '1',
};

function hostsFileOption() {
  const match = /-Djdk\.net\.hosts\.file=(\S+)/.exec(process.env.JAVA_TOOL_OPTIONS ?? '');
  return match?.[1];
}

function headersFor(url, state) {
  const headers = {};
  for (const rule of state.rules)
    if (rule.matchType === 'req_header' && new RegExp(rule.url).test(url)) headers[rule.matchString.toLowerCase()] = rule.replacementString;
  return headers;
}

/** GET operations of an OpenAPI 2.0 or 3.x file, as URLs under targetUrl. */
function operationUrls(parameters) {
  const api = parse(readFileSync(parameters.apiFile, 'utf8'));
  const base = parameters.targetUrl.replace(/\/+$/, '');
  return Object.entries(api.paths ?? {})
    .filter(([, item]) => item.get !== undefined)
    .map(([path]) => `${base}${path.replace(/\{[^}]+\}/g, '1')}`);
}

async function request(url, state) {
  const hostsFile = hostsFileOption();
  try {
    const address = await resolveHost(new URL(url).hostname, readHostsFile(hostsFile), hostsFile !== undefined);
    const status = await getAt(url, address, headersFor(url, state));
    // ZAP passively scans whatever answered, a 404 page included.
    state.reached.add(new URL(url).origin);
    if (status !== 200) state.warnings.push(`${url} answered ${status}`);
  } catch (error) {
    state.errors.push(`${url}: ${error.message}`);
  }
}

function writeReport(parameters, state) {
  const site = [...state.reached].map((origin) => {
    const url = new URL(origin);
    return {
      '@name': origin,
      '@host': url.hostname,
      '@port': url.port || '80',
      '@ssl': 'false',
      alerts: [{ ...ALERT, instances: [{ uri: `${origin}/`, method: 'GET', param: 'x-frame-options' }] }],
    };
  });
  mkdirSync(parameters.reportDir, { recursive: true });
  writeFileSync(`${parameters.reportDir}/${parameters.reportFile}`, JSON.stringify({ '@version': '2.16.1', '@generated': 'Tue, 25 Nov 2026 00:00:00', site }));
}

async function runJob(job, state) {
  console.log(`Job ${job.type} started`);
  if (job.type === 'replacer') state.rules.push(...(job.rules ?? []));
  if (job.type === 'openapi') for (const url of operationUrls(job.parameters)) await request(url, state);
  if (job.type === 'requestor') for (const entry of job.requests ?? []) await request(entry.url, state);
  if (job.type === 'spider') await request(job.parameters.url, state);
  if (job.type === 'report') writeReport(job.parameters, state);
  if (job.type === 'exitStatus') state.exitValues = job.parameters ?? {};
  console.log(`Job ${job.type} finished`);
}

function exitCode(state) {
  const values = state.exitValues ?? {};
  if (state.errors.length > 0) return values.errorExitValue ?? 1;
  if (state.warnings.length > 0) return values.warnExitValue ?? 2;
  return values.okExitValue ?? 0;
}

async function main(argv) {
  const plan = parse(readFileSync(option(argv, '-autorun'), 'utf8'));
  const state = { warnings: [], errors: [], reached: new Set(), exitValues: undefined, rules: [] };
  for (const job of plan.jobs) {
    await runJob(job, state);
    if (state.errors.length > 0 && plan.env.parameters.failOnError) break;
  }
  for (const warning of state.warnings) console.error(`Job warning: ${warning}`);
  for (const error of state.errors) console.error(`Job error: ${error}`);
  console.log(state.errors.length > 0 ? 'Automation plan failures:' : state.warnings.length > 0 ? 'Automation plan warnings:' : 'Automation plan succeeded!');
  return exitCode(state);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error.stack);
    process.exit(1);
  },
);
