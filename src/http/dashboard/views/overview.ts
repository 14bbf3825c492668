/** The first page: how risky the account is now, how that moves week by week, and what ran and runs next. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { Overview } from '../../../app/dashboard-service.js';
import type { ScheduledScan } from '../../../app/ports.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { THREAT_LEVELS } from '../../../domain/risks/finding.js';
import { HEALTH_GRADES, NOT_SCANNED_YET } from '../../../domain/targets/health-score.js';
import type { WeeklyChanges } from '../../../domain/trends/weekly-changes.js';
import { PATHS, withQuery } from '../paths.js';
import { barChart, columnChart } from './charts.js';
import { time, type Notice } from './components.js';
import { page } from './layout.js';
import { scansTable } from './scans.js';
import { scheduleText } from './scheduled-scans.js';

export interface OverviewView {
  session: ActiveSession;
  overview: Overview;
  notice?: Notice | undefined;
}

const levelName = (level: string) => level.charAt(0) + level.slice(1).toLowerCase();

function openRisks(overview: Overview): SafeHtml {
  const counts = THREAT_LEVELS.map((level) => ({ level, count: overview.openRisks[level] ?? 0 }));
  const total = counts.reduce((sum, entry) => sum + entry.count, 0);
  const description = `${total} open risks: ${counts.map((entry) => `${entry.count} ${entry.level.toLowerCase()}`).join(', ')}.`;
  return html`<section class="panel" aria-labelledby="open-risks-heading">
  <h2 id="open-risks-heading">Open risks by threat level</h2>
  <p class="hint">Open risks that are not accepted, ${total} in all. Each number opens the list of those risks.</p>
  <div class="chart-pair">
    ${barChart(
      'open-risks-chart',
      'Open risks by threat level',
      description,
      counts.map((entry) => ({ label: levelName(entry.level), value: entry.count, kind: entry.level })),
    )}
    <table class="compact">
      <caption>Open risks by threat level</caption>
      <thead><tr><th scope="col">Threat level</th><th scope="col">Open risks</th></tr></thead>
      <tbody>${counts.map(
        (entry) =>
          html`<tr><th scope="row">${levelName(entry.level)}</th><td><a href="${withQuery(PATHS.risks, { threat_level: entry.level, status: 'OPEN', accepted: 'no' })}">${entry.count}<span class="visually-hidden"> ${entry.level.toLowerCase()} risks</span></a></td></tr>`,
      )}</tbody>
    </table>
  </div>
</section>`;
}

const weekLabel = (week: WeeklyChanges) => week.weekStart.slice(5);

function trend(weeks: readonly WeeklyChanges[]): SafeHtml {
  const opened = weeks.reduce((sum, week) => sum + week.opened, 0);
  const closed = weeks.reduce((sum, week) => sum + week.closed, 0);
  const description = `Over the last ${weeks.length} weeks scans found ${opened} new risks and closed ${closed}.`;
  return html`<section class="panel" aria-labelledby="trend-heading">
  <h2 id="trend-heading">Risks opened and closed per week</h2>
  <p class="hint">${description} A risk opens when a scan finds it for the first time and closes when a later scan of its target no longer finds it. Weeks start on Monday (UTC).</p>
  <ul class="legend" aria-hidden="true"><li><span class="swatch swatch-opened"></span>Opened</li><li><span class="swatch swatch-closed"></span>Closed</li></ul>
  <div class="chart-pair">
  ${columnChart(
    'trend-chart',
    'Risks opened and closed per week',
    description,
    ['opened', 'closed'],
    weeks.map((week) => ({ label: weekLabel(week), values: [week.opened, week.closed] })),
  )}
  <div class="table-wrap"><table class="compact">
    <caption>Risks opened and closed per week, oldest first</caption>
    <thead><tr><th scope="col">Week of</th><th scope="col">Opened</th><th scope="col">Closed</th></tr></thead>
    <tbody>${weeks.map((week) => html`<tr><th scope="row"><time datetime="${week.weekStart}">${week.weekStart}</time></th><td>${week.opened}</td><td>${week.closed}</td></tr>`)}</tbody>
  </table></div>
  </div>
</section>`;
}

function grades(overview: Overview): SafeHtml {
  return html`<section class="panel" aria-labelledby="grades-heading">
  <h2 id="grades-heading">Targets by health grade</h2>
  <p class="hint">A is healthy; one open critical risk alone drops a target to C. A target no scan has looked at yet has no grade. <a href="${PATHS.targets}">All targets</a></p>
  <dl class="counts grades">${HEALTH_GRADES.map(
    (grade) =>
      html`<div><dt><span class="grade grade-${grade.toLowerCase()}">${grade}</span><span class="visually-hidden"> grade</span></dt><dd>${overview.targetsByGrade.byGrade[grade] ?? 0}</dd></div>`,
  )}<div><dt><span class="empty">${NOT_SCANNED_YET}</span></dt><dd>${overview.targetsByGrade.notScanned}</dd></div></dl>
</section>`;
}

function nextRuns(schedules: readonly ScheduledScan[]): SafeHtml {
  const body =
    schedules.length === 0
      ? html`<p class="empty">Nothing is scheduled. <a href="${PATHS.newScheduledScan}">Schedule a scan</a></p>`
      : html`<div class="table-wrap"><table>
  <caption>Enabled schedules, soonest first</caption>
  <thead><tr><th scope="col">Scheduled scan</th><th scope="col">Schedule</th><th scope="col">Scan types</th><th scope="col">Next run</th></tr></thead>
  <tbody>${schedules.map(
    (schedule) => html`<tr>
    <th scope="row"><a href="${PATHS.scheduledScan(schedule.id)}">${schedule.name ?? schedule.objectName}</a></th>
    <td>${scheduleText(schedule)}</td>
    <td>${schedule.scanTypes.join(', ')}</td>
    <td>${time(schedule.nextRun)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
  return html`<section aria-labelledby="next-heading">
  <h2 id="next-heading">What runs next</h2>
  ${body}
</section>`;
}

export function overviewPage(view: OverviewView): string {
  const { overview } = view;
  return page(
    { title: 'Overview', session: view.session, section: 'overview', notice: view.notice },
    html`<h1>Overview</h1>
<p class="lead">The state of this account's targets now: open risks, how they moved over the last weeks, which scans ran, and what runs next.</p>
<div class="overview-grid">
${openRisks(overview)}
${grades(overview)}
</div>
${trend(overview.weekly)}
<section aria-labelledby="latest-heading">
  <h2 id="latest-heading">Latest scans</h2>
  ${scansTable(overview.latestScans, 'The five newest scans', html`<p class="empty">No scans yet. Start one from a <a href="${PATHS.targets}">target's page</a>.</p>`)}
  <p><a href="${PATHS.scans}">All scans</a></p>
</section>
${nextRuns(overview.nextRuns)}`,
  );
}
