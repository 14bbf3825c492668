/**
 * Making a report (SPEC.md, Reports): its selection read into a snapshot in
 * one read transaction, the snapshot saved, then rendered in its format; and
 * a saved snapshot rendered again in another format. The service runs this
 * in a worker thread on its own read-only connection (src/main/report-worker.ts),
 * so that the seconds it takes hold no request; tests run it in their thread.
 */
import { InvalidRequestError } from '../domain/errors.js';
import { buildReportModel } from '../domain/reports/report-model.js';
import type { ReportFilters, ReportFormat, ReportSnapshot } from '../domain/reports/snapshot.js';
import type { MadeReport, ReportFiles, ReportJob, ReportProducer, ReportRenderers, ReportRepository } from './ports.js';

/** The refusal of a selection over maxTargets targets. */
export function tooManyTargets(maxTargets: number): InvalidRequestError {
  return new InvalidRequestError(`the filters select more than ${maxTargets} targets; narrow targets_filter (target_ids, tags or label) and try again`);
}

export class ReportProduction implements ReportProducer {
  /**
   * Renderings run one at a time, in arrival order: a 10,000-risk PDF holds
   * about 100-140 MB for seconds (bench/reports.ts), and two at once would
   * hold twice that.
   */
  private renderingQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly reports: ReportRepository,
    private readonly files: ReportFiles,
    private readonly renderers: ReportRenderers,
  ) {}

  /**
   * The selection is counted first, from an index and only up to the limit,
   * so that a selection too wide is refused without reading it.
   */
  async produce(job: ReportJob): Promise<MadeReport> {
    const { selection } = job;
    if (this.reports.countTargets(job.accountId, selection, selection.maxTargets + 1) > selection.maxTargets) throw tooManyTargets(selection.maxTargets);
    const scope = this.reports.readScope(job.accountId, selection);
    // Counted before it was read; targets added meanwhile may still make it too wide.
    if (scope.targets.length > selection.maxTargets) throw tooManyTargets(selection.maxTargets);
    const filters: ReportFilters = { targets_filter: selection.targets, risks_filter: selection.risks };
    const snapshot: ReportSnapshot = {
      version: 1,
      id: job.id,
      accountName: job.accountName,
      createdAt: job.createdAt,
      format: job.format,
      filters,
      targets: scope.targets,
      risks: scope.risks,
      matchedRisks: scope.matchedRisks,
    };
    await this.files.saveSnapshot(snapshot.id, snapshot);
    await this.renderSnapshot(snapshot, job.format);
    return { filters, riskCount: snapshot.risks.length, matchedRisks: snapshot.matchedRisks, targetCount: snapshot.targets.length };
  }

  async render(reportId: string, format: ReportFormat): Promise<void> {
    const snapshot = await this.files.loadSnapshot(reportId);
    if (snapshot === undefined) throw new Error(`report ${reportId} has a row but no snapshot in the data directory`);
    await this.renderSnapshot(snapshot, format);
  }

  private renderSnapshot(snapshot: ReportSnapshot, format: ReportFormat): Promise<void> {
    const run = async () => {
      const model = buildReportModel(snapshot);
      await this.files.saveRendering(snapshot.id, format, (out) => this.renderers[format](model, out));
    };
    const rendering = this.renderingQueue.then(run, run);
    this.renderingQueue = rendering.catch(() => undefined);
    return rendering;
  }
}
