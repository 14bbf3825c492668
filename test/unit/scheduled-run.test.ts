import { expect } from 'chai';
import { renderRunEmail, MAX_LISTED_RISKS, MAX_LISTED_TARGETS } from '../../src/app/notifications/run-email.js';
import type { ScheduledRun } from '../../src/app/ports.js';
import {
  MAX_EMAIL_ATTEMPTS,
  countByThreat,
  dueRun,
  emptyCounts,
  nextEmailAttemptAt,
  scanNameForRun,
  shouldSendEmail,
  specOf,
  type RunRisk,
  type RunSummary,
  type TargetChanges,
} from '../../src/domain/schedules/scheduled-run.js';
import type { ScheduleSpec } from '../../src/domain/schedules/schedule.js';

const at = (iso: string) => new Date(iso);
const daily: ScheduleSpec = { kind: 'DAILY', startTime: '2026-01-01T09:00:00.000Z', disabled: false };

describe('dueRun: which run a due schedule performs', () => {
  const cases: Array<[string, ScheduleSpec, string, string, string | undefined, { runAt: string; nextRun: string | undefined } | undefined]> = [
    ['not due a second before next_run', daily, '2026-01-05T09:00:00.000Z', '2026-01-05T08:59:59.000Z', undefined, undefined],
    [
      'due exactly at next_run',
      daily,
      '2026-01-05T09:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
      undefined,
      { runAt: '2026-01-05T09:00:00.000Z', nextRun: '2026-01-06T09:00:00.000Z' },
    ],
    [
      'three missed days collapse into the latest',
      daily,
      '2026-01-05T09:00:00.000Z',
      '2026-01-08T10:00:00.000Z',
      '2026-01-04T09:00:00.000Z',
      { runAt: '2026-01-08T09:00:00.000Z', nextRun: '2026-01-09T09:00:00.000Z' },
    ],
    [
      'ONCE runs at its start and has nothing after',
      { kind: 'ONCE', startTime: '2026-02-01T00:00:00.000Z', disabled: false },
      '2026-02-01T00:00:00.000Z',
      '2026-02-03T00:00:00.000Z',
      undefined,
      { runAt: '2026-02-01T00:00:00.000Z', nextRun: undefined },
    ],
    [
      'a start_time kept by the 5-minute rule runs as itself',
      daily,
      '2026-01-05T09:03:00.000Z',
      '2026-01-05T09:03:00.000Z',
      undefined,
      { runAt: '2026-01-05T09:03:00.000Z', nextRun: '2026-01-06T09:00:00.000Z' },
    ],
    [
      'MONTHLY on the 31st falls on the last day of February',
      { kind: 'MONTHLY', startTime: '2026-01-31T06:00:00.000Z', disabled: false },
      '2026-02-28T06:00:00.000Z',
      '2026-02-28T06:00:01.000Z',
      '2026-01-31T06:00:00.000Z',
      { runAt: '2026-02-28T06:00:00.000Z', nextRun: '2026-03-31T06:00:00.000Z' },
    ],
  ];
  for (const [title, spec, stored, now, lastRan, expected] of cases) {
    it(title, () => {
      const due = dueRun(spec, at(stored), at(now), lastRan === undefined ? undefined : at(lastRan));
      expect(due && { runAt: due.runAt.toISOString(), nextRun: due.nextRun?.toISOString() }).to.deep.equal(expected);
    });
  }

  it('specOf maps the stored fields, leaving out what is null', () => {
    expect(specOf({ schedule: 'CUSTOM', startTime: 's', scheduleDates: ['d'], timeZone: null, disabled: true })).to.deep.equal({
      kind: 'CUSTOM',
      startTime: 's',
      scheduleDates: ['d'],
      disabled: true,
    });
  });
});

describe('scanNameForRun: deterministic, valid object names', () => {
  const runAt = at('2026-03-01T09:00:00.000Z');
  const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

  it('is <scheduledscan>-<unix seconds>-<type>, then -2, -3 for further chunks', () => {
    expect(scanNameForRun('nightly', runAt, 'OWASP_ZAP_ACTIVE', 0)).to.equal('nightly-1772355600-owasp-zap-active');
    expect(scanNameForRun('nightly', runAt, 'NMAP', 2)).to.equal('nightly-1772355600-nmap-3');
  });

  it('gives the same name for the same run and a different one for another run', () => {
    expect(scanNameForRun('a', runAt, 'NMAP', 0)).to.equal(scanNameForRun('a', new Date(runAt), 'NMAP', 0));
    expect(scanNameForRun('a', runAt, 'NMAP', 0)).to.not.equal(scanNameForRun('a', new Date(runAt.getTime() + 1000), 'NMAP', 0));
  });

  it('shortens a long object name and keeps the name a DNS subdomain', () => {
    const name = scanNameForRun(`${'x'.repeat(190)}-${'y'.repeat(60)}`, runAt, 'NMAP_UDP', 11);
    expect(name.length).to.be.at.most(200);
    expect(name).to.match(DNS_SUBDOMAIN);
    expect(name.endsWith('-1772355600-nmap-udp-12')).to.equal(true);
  });
});

const risk = (title: string, threatLevel: RunRisk['threatLevel']): RunRisk => ({ id: title, title, threatLevel, scanType: 'NMAP' });

function summary(newRisks: RunRisk[], closedRisks: RunRisk[] = []): RunSummary {
  return {
    targets: [{ target: '198.51.99.7', label: 'web', newRisks, closedRisks }],
    newCounts: countByThreat(newRisks),
    closedCounts: countByThreat(closedRisks),
    scans: [{ id: 'scan-1', type: 'NMAP', state: 'SUCCEEDED' }],
    skipped: [],
  };
}

describe('shouldSendEmail', () => {
  const none = summary([]);
  const opened = summary([risk('a', 'LOW')]);
  const closed = summary([], [risk('a', 'LOW')]);
  const table: Array<[string, string[], RunSummary, boolean]> = [
    ['NEVER', ['a@example.com'], opened, false],
    ['ALWAYS', ['a@example.com'], none, true],
    ['ALWAYS', [], opened, false],
    ['ON_CHANGES', ['a@example.com'], none, false],
    ['ON_CHANGES', ['a@example.com'], opened, true],
    ['ON_CHANGES', ['a@example.com'], closed, true],
  ];
  for (const [notification, to, given, expected] of table) {
    it(`${notification} with ${to.length} recipients and ${given === none ? 'no changes' : 'changes'}: ${expected ? 'sends' : 'does not send'}`, () => {
      expect(shouldSendEmail(notification as 'NEVER', to, given)).to.equal(expected);
    });
  }
});

describe('e-mail retries', () => {
  it('waits 1, 5, 15, 30 minutes and then hourly, and gives up after the last attempt', () => {
    const failedAt = at('2026-01-01T00:00:00.000Z');
    const waits = Array.from({ length: MAX_EMAIL_ATTEMPTS }, (_, index) => nextEmailAttemptAt(failedAt, index + 1));
    expect(waits.map((when) => (when === undefined ? undefined : (when.getTime() - failedAt.getTime()) / 60_000))).to.deep.equal([
      1,
      5,
      15,
      30,
      60,
      60,
      60,
      undefined,
    ]);
  });
});

describe('renderRunEmail', () => {
  const run: ScheduledRun = {
    scheduledScanId: 'sched',
    runAt: '2026-03-01T09:00:00.000Z',
    accountId: 'acc',
    scheduleName: 'Weekly\r\nBcc: victim@example.com <script>',
    startedAt: '2026-03-01T09:00:01.000Z',
    scanIds: ['scan-1'],
    skipped: [{ scanType: 'NESSUS', reason: 'NESSUS scans need <the option>' }],
    emailNotification: 'ALWAYS',
    emailTo: ['sec@example.com'],
    notification: 'PENDING',
    emailAttempts: 0,
    nextEmailAt: '2026-03-01T09:00:01.000Z',
    lastError: null,
  };

  it('counts by threat level, lists the worst first, and escapes every value in the HTML', () => {
    const mail = renderRunEmail(
      run,
      { ...summary([risk('Low thing', 'LOW'), risk('<img src=x onerror=alert(1)>', 'CRITICAL')]), skipped: run.skipped },
      'https://vigil.example.com/',
    );
    expect(mail.subject).to.equal('[Vigil] Weekly Bcc: victim@example.com <script>: 2 new risks, 0 closed');
    expect(mail.subject).to.not.match(/[\r\n]/);
    expect(mail.text).to.include('New risks:    1 critical, 0 high, 0 medium, 1 low, 0 info');
    expect(mail.text.indexOf('[CRITICAL]')).to.be.lessThan(mail.text.indexOf('[LOW]'));
    expect(mail.text).to.include('NESSUS not run: NESSUS scans need <the option>');
    expect(mail.text).to.include('https://vigil.example.com/dashboard/risks');
    expect(mail.html).to.not.include('<img');
    expect(mail.html).to.not.include('<script>');
    expect(mail.html).to.include('&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.html).to.include('&lt;the option&gt;');
  });

  it(`lists at most ${MAX_LISTED_RISKS} risks per target and kind, and counts the rest`, () => {
    const many = Array.from({ length: MAX_LISTED_RISKS + 7 }, (_, index) => risk(`risk ${String(index).padStart(3, '0')}`, 'MEDIUM'));
    const mail = renderRunEmail(run, summary(many), 'https://vigil.example.com');
    expect(mail.text.match(/\[MEDIUM\]/g)).to.have.length(MAX_LISTED_RISKS);
    expect(mail.text).to.include('...and 7 more');
    expect(mail.html).to.include('and 7 more');
    expect(mail.subject).to.include(`${MAX_LISTED_RISKS + 7} new risks`);
  });

  it(`lists at most ${MAX_LISTED_TARGETS} targets, those with the most severe changes, by address, and counts the rest`, () => {
    // 130 targets with one LOW new risk each, 3 with a CRITICAL one and 2 that only closed a HIGH one, at the end of the address range.
    const targets: TargetChanges[] = [
      ...Array.from({ length: 130 }, (_, index) => ({ target: `10.0.0.${index}`, label: '', newRisks: [risk(`low ${index}`, 'LOW')], closedRisks: [] })),
      ...[200, 201, 202].map((host) => ({ target: `10.0.0.${host}`, label: '', newRisks: [risk(`critical ${host}`, 'CRITICAL')], closedRisks: [] })),
      ...[210, 211].map((host) => ({ target: `10.0.0.${host}`, label: '', newRisks: [], closedRisks: [risk(`fixed ${host}`, 'HIGH')] })),
    ];
    const mail = renderRunEmail(run, { ...summary([]), targets, newCounts: countByThreat(targets.flatMap((target) => target.newRisks)) }, 'http://x');
    const listed = mail.text.split('\n').filter((line) => /^10\.0\.0\.\d+$/.test(line));
    expect(listed).to.have.length(MAX_LISTED_TARGETS);
    expect(listed).to.include.members(['10.0.0.200', '10.0.0.201', '10.0.0.202']);
    expect(listed).to.not.include.members(['10.0.0.210', '10.0.0.211']); // a LOW new risk outranks a closed HIGH one
    expect(listed).to.deep.equal([...listed].sort((a, b) => a.localeCompare(b)));
    expect(mail.text).to.include(`...and ${135 - MAX_LISTED_TARGETS} more targets with new or closed risks`);
    expect(mail.html).to.include(`and ${135 - MAX_LISTED_TARGETS} more targets with new or closed risks`);
    expect(mail.subject).to.include('133 new risks, 0 closed');
  });

  it('says so when nothing changed', () => {
    expect(renderRunEmail(run, { ...summary([]), newCounts: emptyCounts() }, 'http://x').subject).to.match(/no new or closed risks$/);
  });
});
