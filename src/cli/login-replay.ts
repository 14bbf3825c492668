/**
 * `vigil login-replay --recording FILE --plan-input FILE --plan FILE
 * [--termination-log FILE]`: the login step of an authenticated ZAP scan's
 * Job (runtime/kubernetes/login-step.ts). Replays the Selenium IDE recording
 * in the confined browser, then writes ZAP's plan from the plan input with
 * the session it got. Reads VIGIL_ALLOW_TARGETS and VIGIL_CHROMIUM.
 *
 * Nothing secret is printed: not the recording, not the session. A failed
 * login exits 3 with its sentence on stderr and in the termination log,
 * where the service reads it; 1 means the step itself broke.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { loadLoginReplaySettings } from '../config/settings.js';
import { sessionProblem, zapAutomationPlan, type ZapPlanInput } from '../domain/scanners/zap-plan.js';
import { parseLoginRecording } from '../domain/targets/login-recording.js';
import { systemResolver } from '../runtime/dns-resolver.js';
import { BrowserLoginReplayer } from '../runtime/login-replay/browser-login.js';
import { LOGIN_FAILED_EXIT } from '../runtime/kubernetes/login-step.js';
import { UsageError, parseCommandArgs } from './usage.js';

export async function runLoginReplay(args: string[]): Promise<number> {
  const values = parseCommandArgs(args, {
    recording: { type: 'string' },
    'plan-input': { type: 'string' },
    plan: { type: 'string' },
    'termination-log': { type: 'string' },
  });
  const recordingFile = values.recording;
  const planInputFile = values['plan-input'];
  const planFile = values.plan;
  if (recordingFile === undefined || planInputFile === undefined || planFile === undefined)
    throw new UsageError('--recording, --plan-input and --plan are required');
  const settings = loadLoginReplaySettings();
  const recording = parseLoginRecording(basename(recordingFile), await readFile(recordingFile));
  const planInput = JSON.parse(await readFile(planInputFile, 'utf8')) as ZapPlanInput;
  const replayer = new BrowserLoginReplayer({ chromiumPath: settings.chromiumPath, allowTargets: settings.allowTargets, resolver: systemResolver });
  const outcome = await replayer.replay(recording, planInput.targetUrl);
  const problem = outcome.ok ? sessionProblem(outcome.session) : outcome.message;
  if (!outcome.ok || problem !== undefined) {
    const message = problem ?? 'the login failed';
    process.stderr.write(`login failed: ${message}\n`);
    if (values['termination-log'] !== undefined) await writeFile(values['termination-log'], message.slice(0, 4000)).catch(() => undefined);
    return LOGIN_FAILED_EXIT;
  }
  await writeFile(planFile, zapAutomationPlan({ ...planInput, session: outcome.session }), { mode: 0o600 });
  // prepare-inputs copied every input next to the outputs; the scanner needs neither of these.
  for (const name of [basename(recordingFile), basename(planInputFile)]) await rm(join(dirname(planFile), name), { force: true });
  const { cookies, authorization } = outcome.session;
  process.stdout.write(`login replayed: ZAP's plan carries ${cookies.length} cookie(s)${authorization === undefined ? '' : ' and an Authorization header'}\n`);
  return 0;
}
