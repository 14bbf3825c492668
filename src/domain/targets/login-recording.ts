/**
 * A login recording: a Selenium IDE project (`.side`, JSON, format versions
 * 2 and 3) attached to a Target and replayed before each authenticated ZAP
 * scan (SPEC.md, Authenticated scanning). Pure: checks the upload and turns
 * it into the list of commands the replayer runs. Which commands the
 * replayer supports is its business; an upload with a command it does not
 * support is accepted and fails at replay with a message naming it, so that
 * a newer recorder never makes an upload fail for a command that may not
 * even be reached.
 */
import { InvalidRequestError } from '../errors.js';

export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
/** Bounds of what a recording may hold; a login is a handful of commands. */
const MAX_RECORDING_COMMANDS = 200;
const MAX_RECORDING_TEXT = 4096;

export interface RecordedCommand {
  command: string;
  target: string;
  value: string;
}

export interface LoginRecording {
  /** The project's base URL, against which `open` targets are resolved; absent when the project has none. */
  url?: string;
  /** Name of the test replayed: the first test that has commands. */
  testName: string;
  commands: RecordedCommand[];
}

const SIDE_VERSIONS = ['2.0', '3.0'];

/** Checks an uploaded file name and its bytes; throws a 400 saying what to change. */
export function parseLoginRecording(fileName: string, content: Buffer): LoginRecording {
  if (!/\.side$/i.test(fileName)) {
    throw new InvalidRequestError(
      `the login recording must be a Selenium IDE project whose file name ends in .side, not '${fileName.slice(0, 80)}'; save the project from Selenium IDE and upload that file`,
    );
  }
  const project = projectOf(content);
  const version = typeof project.version === 'string' ? project.version : undefined;
  if (version === undefined || !SIDE_VERSIONS.includes(version)) {
    throw new InvalidRequestError(
      `the .side file has format version ${JSON.stringify(project.version ?? null).slice(0, 20)}; Vigil reads Selenium IDE projects of version 2.0 and 3.0: save it again from a current Selenium IDE`,
    );
  }
  const url = baseUrlOf(project.url);
  const test = firstTestWithCommands(project.tests);
  return { ...(url === undefined ? {} : { url }), testName: test.name, commands: test.commands };
}

function projectOf(content: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(content));
  } catch (error) {
    throw new InvalidRequestError(
      `the .side file is not valid UTF-8 JSON (${(error as Error).message.slice(0, 120)}); upload the project file Selenium IDE saved, unchanged`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray((parsed as Record<string, unknown>).tests)) {
    throw new InvalidRequestError('the .side file is JSON but not a Selenium IDE project (it has no "tests" list); upload the project file Selenium IDE saved');
  }
  return parsed as Record<string, unknown>;
}

function baseUrlOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value) || !URL.canParse(value)) {
    throw new InvalidRequestError(`the project's "url" must be an http(s) URL, not ${JSON.stringify(value).slice(0, 80)}; set the base URL in Selenium IDE`);
  }
  return new URL(value).href;
}

function firstTestWithCommands(tests: unknown): { name: string; commands: RecordedCommand[] } {
  for (const [index, test] of (tests as unknown[]).entries()) {
    if (typeof test !== 'object' || test === null) continue;
    const commands = (test as Record<string, unknown>).commands;
    if (!Array.isArray(commands) || commands.length === 0) continue;
    const name =
      typeof (test as Record<string, unknown>).name === 'string' ? ((test as Record<string, unknown>).name as string).slice(0, 200) : `test ${index + 1}`;
    return { name, commands: commandsOf(name, commands) };
  }
  throw new InvalidRequestError('the Selenium IDE project has no test with commands; record the login as a test and save the project again');
}

function commandsOf(testName: string, commands: unknown[]): RecordedCommand[] {
  if (commands.length > MAX_RECORDING_COMMANDS) {
    throw new InvalidRequestError(`test '${testName}' has ${commands.length} commands; a login recording may have at most ${MAX_RECORDING_COMMANDS}`);
  }
  return commands.map((raw, index) => {
    const entry = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const text = (field: string): string => {
      const value = entry[field] ?? '';
      if (typeof value !== 'string') throw new InvalidRequestError(`command ${index + 1} of test '${testName}': "${field}" must be a string`);
      if (value.length > MAX_RECORDING_TEXT)
        throw new InvalidRequestError(`command ${index + 1} of test '${testName}': "${field}" is longer than ${MAX_RECORDING_TEXT} characters`);
      return value;
    };
    const command = text('command');
    if (command === '')
      throw new InvalidRequestError(`command ${index + 1} of test '${testName}' has no "command"; every step of a recording names its command`);
    return { command, target: text('target'), value: text('value') };
  });
}

/** A stored attachment file name: the base name as uploaded, without path or control characters, at most 255 characters. */
export function attachmentFileName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[\x00-\x1f\x7f]/g, '')
    .trim()
    .slice(0, 255);
  if (clean === '') throw new InvalidRequestError("the file part has no file name; send it as a file with a name (curl -F 'file=@login.side')");
  return clean;
}
