/**
 * The e-mail a scheduled run sends when its Scans have finished: per target,
 * the risks the run opened and closed by threat level, with a link to the
 * dashboard. Plain text and HTML say the same; every value in the HTML is
 * escaped.
 */
import { THREAT_LEVELS } from '../../domain/risks/finding.js';
import { byThreat, hasChanges, type RunRisk, type RunSummary, type TargetChanges, type ThreatCounts } from '../../domain/schedules/scheduled-run.js';
import type { EmailMessage, ScheduledRun } from '../ports.js';
import { escapeHtml as escape } from '../present/html.js';

/** At most this many risks are listed per target and kind; the rest are counted. */
export const MAX_LISTED_RISKS = 50;
/**
 * At most this many targets are listed, those with the most severe new risks
 * (then closed ones) when more changed; the rest are counted. A weekly sweep
 * of a /16 changes thousands.
 */
export const MAX_LISTED_TARGETS = 100;

export function renderRunEmail(run: ScheduledRun, given: RunSummary, publicUrl: string): EmailMessage {
  // Each target's risks worst first; the targets listed by address.
  const changed = given.targets
    .filter((target) => target.newRisks.length > 0 || target.closedRisks.length > 0)
    .map((target) => ({ ...target, newRisks: [...target.newRisks].sort(byThreat), closedRisks: [...target.closedRisks].sort(byThreat) }));
  const listed = changed.length <= MAX_LISTED_TARGETS ? changed : changed.sort(bySeverestChange).slice(0, MAX_LISTED_TARGETS);
  const summary: RunSummary = { ...given, targets: listed.sort((a, b) => a.target.localeCompare(b.target)) };
  const unlisted = changed.length - listed.length;
  const dashboard = `${publicUrl.replace(/\/+$/, '')}/dashboard/risks`;
  const newTotal = total(summary.newCounts);
  const closedTotal = total(summary.closedCounts);
  const subject = `[Vigil] ${oneLine(run.scheduleName)}: ${hasChanges(summary) ? `${plural(newTotal, 'new risk')}, ${closedTotal} closed` : 'no new or closed risks'}`;
  return { to: run.emailTo, subject, text: text(run, summary, unlisted, dashboard), html: html(run, summary, unlisted, dashboard) };
}

/** The target whose most severe new risk (then closed one) is worse first; then the one with more changes. */
function bySeverestChange(a: TargetChanges, b: TargetChanges): number {
  const worst = (risks: readonly RunRisk[]) => (risks[0] === undefined ? THREAT_LEVELS.length : THREAT_LEVELS.indexOf(risks[0].threatLevel));
  return (
    worst(a.newRisks) - worst(b.newRisks) ||
    worst(a.closedRisks) - worst(b.closedRisks) ||
    b.newRisks.length + b.closedRisks.length - (a.newRisks.length + a.closedRisks.length)
  );
}

function moreTargets(count: number): string {
  return `...and ${plural(count, 'more target')} with new or closed risks`;
}

function text(run: ScheduledRun, summary: RunSummary, unlisted: number, dashboard: string): string {
  const lines = [
    `Scheduled scan "${oneLine(run.scheduleName)}" ran at ${when(run.runAt)}.`,
    '',
    `New risks:    ${countsLine(summary.newCounts)}`,
    `Closed risks: ${countsLine(summary.closedCounts)}`,
  ];
  for (const target of summary.targets) {
    lines.push('', targetName(target.target, target.label));
    for (const [heading, risks] of [
      ['New', target.newRisks],
      ['Closed', target.closedRisks],
    ] as const) {
      if (risks.length === 0) continue;
      lines.push(`  ${heading}:`);
      for (const risk of risks.slice(0, MAX_LISTED_RISKS)) lines.push(`    [${risk.threatLevel}] ${oneLine(risk.title)} (${risk.scanType})`);
      if (risks.length > MAX_LISTED_RISKS) lines.push(`    ...and ${risks.length - MAX_LISTED_RISKS} more`);
    }
  }
  if (unlisted > 0) lines.push('', moreTargets(unlisted));
  lines.push('', 'Scans:');
  for (const scan of summary.scans) lines.push(`  ${scan.type} ${scan.state} (${scan.id})`);
  if (summary.scans.length === 0) lines.push('  none');
  for (const skip of summary.skipped) lines.push(`  ${skip.scanType} not run: ${oneLine(skip.reason)}`);
  lines.push('', `Review the risks in the dashboard: ${dashboard}`, '');
  return lines.join('\n');
}

function html(run: ScheduledRun, summary: RunSummary, unlisted: number, dashboard: string): string {
  const parts = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>',
    escape(run.scheduleName),
    '</title></head>',
    '<body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1f2328;line-height:1.5">',
    `<h1 style="font-size:20px">Scheduled scan &ldquo;${escape(run.scheduleName)}&rdquo;</h1>`,
    `<p>Ran at ${escape(when(run.runAt))}.</p>`,
    '<table style="border-collapse:collapse"><thead><tr><th scope="col" style="text-align:left;padding:2px 8px"></th>',
    ...THREAT_LEVELS.map((level) => `<th scope="col" style="text-align:right;padding:2px 8px">${level}</th>`),
    '</tr></thead><tbody>',
    countsRow('New risks', summary.newCounts),
    countsRow('Closed risks', summary.closedCounts),
    '</tbody></table>',
  ];
  for (const target of summary.targets) {
    parts.push(`<h2 style="font-size:16px;margin-top:24px">${escape(targetName(target.target, target.label))}</h2>`);
    for (const [heading, risks] of [
      ['New', target.newRisks],
      ['Closed', target.closedRisks],
    ] as const) {
      if (risks.length === 0) continue;
      parts.push(`<h3 style="font-size:14px">${heading}</h3><ul>`);
      for (const risk of risks.slice(0, MAX_LISTED_RISKS)) parts.push(riskItem(risk));
      if (risks.length > MAX_LISTED_RISKS) parts.push(`<li>&hellip;and ${risks.length - MAX_LISTED_RISKS} more</li>`);
      parts.push('</ul>');
    }
  }
  if (unlisted > 0) parts.push(`<p>${escape(moreTargets(unlisted))}</p>`);
  parts.push('<h2 style="font-size:16px;margin-top:24px">Scans</h2><ul>');
  for (const scan of summary.scans) parts.push(`<li>${escape(scan.type)} ${escape(scan.state)} <code>${escape(scan.id)}</code></li>`);
  if (summary.scans.length === 0) parts.push('<li>none</li>');
  for (const skip of summary.skipped) parts.push(`<li>${escape(skip.scanType)} not run: ${escape(skip.reason)}</li>`);
  parts.push('</ul>', `<p><a href="${escape(dashboard)}">Review the risks in the dashboard</a></p>`, '</body></html>');
  return parts.join('');
}

function riskItem(risk: RunRisk): string {
  return `<li><strong>${risk.threatLevel}</strong> ${escape(risk.title)} <span style="color:#59636e">(${risk.scanType})</span></li>`;
}

function countsRow(heading: string, counts: ThreatCounts): string {
  const cells = THREAT_LEVELS.map((level) => `<td style="text-align:right;padding:2px 8px">${counts[level]}</td>`).join('');
  return `<tr><th scope="row" style="text-align:left;padding:2px 8px">${heading}</th>${cells}</tr>`;
}

function countsLine(counts: ThreatCounts): string {
  return THREAT_LEVELS.map((level) => `${counts[level]} ${level.toLowerCase()}`).join(', ');
}

function total(counts: ThreatCounts): number {
  return THREAT_LEVELS.reduce((sum, level) => sum + counts[level], 0);
}

function targetName(target: string, label: string): string {
  return label === '' || label === target ? target : `${target} (${label})`;
}

function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Header and text lines must not carry line breaks from user-given names. */
function oneLine(value: string): string {
  return value.replace(/[\r\n\t]+/g, ' ');
}
