/** The report's pure parts: which risks in which order, the counts, the filters shown, file names, text bounds. */
import { expect } from 'chai';
import { buildReportModel, bySeverity, cvesOf, describeFilters, evidenceOf, referencesOf, EVIDENCE_LIMITS } from '../../src/domain/reports/report-model.js';
import { REPORT_LIMITS, downloadFileName, reportText, type ReportRisk } from '../../src/domain/reports/snapshot.js';
import { chartsOf } from '../../src/reports/charts.js';
import { neutraliseFormula } from '../../src/reports/csv-report.js';
import { reportSnapshot } from '../support/report-snapshot.js';

function risk(overrides: Partial<ReportRisk> & { level?: ReportRisk['definition']['threat_level']; cvss?: string; title?: string }): ReportRisk {
  return {
    id: overrides.id ?? 'r',
    targetId: 't',
    status: overrides.status ?? 'OPEN',
    isAccepted: overrides.isAccepted ?? false,
    firstDetectedAt: '2026-01-01T00:00:00.000Z',
    lastDetectedAt: '2026-01-01T00:00:00.000Z',
    definition: {
      scan_type: 'NUCLEI',
      title: overrides.title ?? 'x',
      threat_level: overrides.level ?? 'LOW',
      description: '',
      solution: '',
      cvss: overrides.cvss ?? '',
      additional_info: {},
    },
  };
}

describe('report model', () => {
  it('orders risks most severe first: level, CVSS, open before closed, unaccepted before accepted, title', () => {
    const risks = [
      risk({ id: 'low', level: 'LOW' }),
      risk({ id: 'high-7', level: 'HIGH', cvss: '7.1' }),
      risk({ id: 'critical', level: 'CRITICAL' }),
      risk({ id: 'high-8', level: 'HIGH', cvss: '8.8' }),
      risk({ id: 'high-8-closed', level: 'HIGH', cvss: '8.8', status: 'CLOSED' }),
      risk({ id: 'high-8-accepted', level: 'HIGH', cvss: '8.8', isAccepted: true }),
      risk({ id: 'info', level: 'INFO' }),
    ];
    expect([...risks].sort(bySeverity).map((entry) => entry.id)).to.deep.equal([
      'critical',
      'high-8',
      'high-8-accepted',
      'high-8-closed',
      'high-7',
      'low',
      'info',
    ]);
  });

  it('counts by threat level, status and acceptance, grades the targets, and puts the worst target first', () => {
    const model = buildReportModel(reportSnapshot());
    expect(model.summary.total).to.equal(3);
    expect(model.summary.byThreatLevel).to.deep.equal({ CRITICAL: 1, HIGH: 1, MEDIUM: 0, LOW: 0, INFO: 1 });
    expect(model.summary.byStatus).to.deep.equal({ OPEN: 2, CLOSED: 1 });
    expect(model.summary.accepted).to.equal(0);
    expect(model.summary.targetsByGrade).to.deep.equal({ A: 1, B: 0, C: 0, D: 1, F: 0 });
    expect(model.sections.map((section) => section.target.id)).to.deep.equal(['t-web', 't-db']);
    expect(model.sections[0]!.risks.map((entry) => entry.definition.threat_level)).to.deep.equal(['CRITICAL', 'HIGH']);
    expect(model.truncated).to.equal(true);
  });

  it('counts a target no scan has looked at as not scanned, not as grade A, in the summary and its chart', () => {
    const snapshot = reportSnapshot();
    const fresh = { id: 't-new', target: 'new.example.com', label: '', tags: [], healthScore: { score: 100, grade: 'A' as const }, lastScannedAt: null };
    const model = buildReportModel({ ...snapshot, targets: [...snapshot.targets, fresh] });
    expect(model.summary.targetsByGrade).to.deep.equal({ A: 1, B: 0, C: 0, D: 1, F: 0 });
    expect(model.summary.targetsNotScanned).to.equal(1);
    const grades = chartsOf(model)[1]!;
    expect(grades.bars.map((bar) => [bar.label, bar.value])).to.deep.equal([
      ['Grade A', 1],
      ['Grade B', 0],
      ['Grade C', 0],
      ['Grade D', 1],
      ['Grade F', 0],
      ['Not scanned', 1],
    ]);
    expect(chartsOf(buildReportModel(snapshot))[1]!.bars.map((bar) => bar.label)).not.to.include('Not scanned');
  });

  it('an empty snapshot is a valid model with zero counts', () => {
    const model = buildReportModel({ ...reportSnapshot(), targets: [], risks: [], matchedRisks: 0 });
    expect(model.summary.total).to.equal(0);
    expect(model.sections).to.deep.equal([]);
    expect(model.truncated).to.equal(false);
  });

  it('describes the filters a reader sees on the cover; none gives no lines', () => {
    expect(describeFilters({ targets_filter: { tags: ['prod', 'web'] }, risks_filter: { status: ['OPEN'] } })).to.deep.equal([
      'Targets tags: prod, web',
      'Risks status: OPEN',
    ]);
    expect(describeFilters({ targets_filter: {}, risks_filter: {} })).to.deep.equal([]);
  });

  it('takes CVEs and references from additional_info and bounds the evidence', () => {
    const long = 'x'.repeat(EVIDENCE_LIMITS.maxValueChars + 50);
    const info: Record<string, unknown> = {
      cves: ['CVE-1', 7],
      references: Array.from({ length: 30 }, (_, index) => `https://e.example/${index}`),
      blank: '',
      none: null,
      empty: [],
      long,
    };
    for (let index = 0; index < 20; index++) info[`k${index}`] = index;
    const entry = { ...risk({}), definition: { ...risk({}).definition, additional_info: info } };
    expect(cvesOf(entry)).to.deep.equal(['CVE-1']);
    expect(referencesOf(entry)).to.have.length(EVIDENCE_LIMITS.maxReferences);
    const evidence = evidenceOf(entry);
    expect(evidence).to.have.length(EVIDENCE_LIMITS.maxEntries);
    expect(evidence[0]).to.deep.equal({ label: 'long', value: `${long.slice(0, EVIDENCE_LIMITS.maxValueChars)}… (cut)` });
  });

  it("bounds a risk's text in a report and says so", () => {
    expect(reportText('short')).to.equal('short');
    const cut = reportText('y'.repeat(REPORT_LIMITS.maxTextChars + 1));
    expect(cut.startsWith('y'.repeat(REPORT_LIMITS.maxTextChars))).to.equal(true);
    expect(cut).to.match(/cut at 8000 characters/);
  });
});

describe('report download names', () => {
  const created = '2026-11-25T09:30:00.000Z';
  for (const [requested, format, expected] of [
    [undefined, 'PDF', 'vigil-report-2026-11-25.pdf'],
    ['Q3 audit', 'HTML', 'Q3 audit.html'],
    ['Q3 audit.pdf', 'CSV', 'Q3 audit.csv'],
    ['../../etc/passwd', 'PDF', 'etc_passwd.pdf'],
    ['a"b\r\nContent-Type: x', 'PDF', 'a_b_Content-Type_ x.pdf'],
    ['Prüfbericht', 'PDF', 'Prufbericht.pdf'],
    ['...', 'CSV', 'vigil-report-2026-11-25.csv'],
  ] as const) {
    it(`${JSON.stringify(requested)} as ${format} is ${expected}`, () => {
      expect(downloadFileName(requested, format, created)).to.equal(expected);
    });
  }

  it('never exceeds the length limit plus the extension', () => {
    expect(downloadFileName('n'.repeat(500), 'HTML', created)).to.have.length(REPORT_LIMITS.maxFilenameLength + '.html'.length);
  });
});

describe('CSV formula neutralisation (OWASP CSV injection)', () => {
  for (const cell of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) {
    it(`prefixes ${JSON.stringify(cell)} with an apostrophe`, () => expect(neutraliseFormula(cell)).to.equal(`'${cell}`));
  }
  for (const cell of ['plain', '1-2', ' =1', '']) {
    it(`leaves ${JSON.stringify(cell)} as it is`, () => expect(neutraliseFormula(cell)).to.equal(cell));
  }
});
