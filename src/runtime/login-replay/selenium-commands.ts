/**
 * Runs Selenium IDE commands on a playwright-core Page. The commands people
 * record for a login are supported (README, Authenticated scanning lists
 * them); anything else throws a ReplayError naming the command, never
 * skipped. Commands that run JavaScript of the recording's own
 * (runScript, executeScript, executeAsyncScript) are refused.
 */
import type { Locator, Page } from 'playwright-core';
import type { RecordedCommand } from '../../domain/targets/login-recording.js';
import { PROXY_ANSWER_HEADER } from './confining-proxy.js';

export class ReplayError extends Error {}

export interface ReplayContext {
  page: Page;
  /** Base of relative `open` targets: the recording's URL, else the target's. */
  baseUrl: string;
  commandTimeoutMs: number;
  variables: Map<string, string>;
}

const KEYS: Record<string, string> = {
  ENTER: 'Enter',
  TAB: 'Tab',
  BACKSPACE: 'Backspace',
  BKSP: 'Backspace',
  ESC: 'Escape',
  ESCAPE: 'Escape',
  DELETE: 'Delete',
  DEL: 'Delete',
  SPACE: 'Space',
  UP: 'ArrowUp',
  DOWN: 'ArrowDown',
  LEFT: 'ArrowLeft',
  RIGHT: 'ArrowRight',
  HOME: 'Home',
  END: 'End',
  PAGE_UP: 'PageUp',
  PAGE_DOWN: 'PageDown',
};

const SCRIPT_COMMANDS = new Set(['runScript', 'executeScript', 'executeAsyncScript']);

type Handler = (ctx: ReplayContext, target: string, value: string) => Promise<void>;

const HANDLERS: Record<string, Handler> = {
  open: async (ctx, target) => {
    const url = URL.canParse(target, ctx.baseUrl) ? new URL(target, ctx.baseUrl) : undefined;
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ReplayError(`'${target.slice(0, 120)}' is not an http(s) URL`);
    const response = await ctx.page.goto(url.href, { timeout: ctx.commandTimeoutMs });
    if (response !== null && response.headers()[PROXY_ANSWER_HEADER] !== undefined)
      throw new ReplayError((await response.text()).replace(/^Vigil login proxy: /, '').slice(0, 300));
  },
  click: async (ctx, target) => locate(ctx, target).click({ timeout: ctx.commandTimeoutMs }),
  clickAt: async (ctx, target) => locate(ctx, target).click({ timeout: ctx.commandTimeoutMs }),
  doubleClick: async (ctx, target) => locate(ctx, target).dblclick({ timeout: ctx.commandTimeoutMs }),
  mouseOver: async (ctx, target) => locate(ctx, target).hover({ timeout: ctx.commandTimeoutMs }),
  type: async (ctx, target, value) => locate(ctx, target).fill(value, { timeout: ctx.commandTimeoutMs }),
  sendKeys: async (ctx, target, value) => sendKeys(ctx, locate(ctx, target), value),
  select: async (ctx, target, value) => {
    await locate(ctx, target).selectOption(optionOf(value), { timeout: ctx.commandTimeoutMs });
  },
  check: async (ctx, target) => locate(ctx, target).check({ timeout: ctx.commandTimeoutMs }),
  uncheck: async (ctx, target) => locate(ctx, target).uncheck({ timeout: ctx.commandTimeoutMs }),
  setWindowSize: async (ctx, target) => {
    const match = /^(\d{2,5})x(\d{2,5})$/.exec(target.trim());
    if (match === null) throw new ReplayError(`window size '${target.slice(0, 40)}' is not WIDTHxHEIGHT`);
    await ctx.page.setViewportSize({ width: Math.min(Number(match[1]), 4096), height: Math.min(Number(match[2]), 4096) });
  },
  pause: async (ctx, target, value) => {
    const ms = Number(value || target);
    if (!Number.isFinite(ms) || ms < 0) throw new ReplayError(`pause of '${(value || target).slice(0, 40)}' is not a number of milliseconds`);
    if (ms > ctx.commandTimeoutMs) throw new ReplayError(`a pause of ${ms} ms is longer than the ${ctx.commandTimeoutMs} ms a command may take`);
    await ctx.page.waitForTimeout(ms);
  },
  waitForElementPresent: async (ctx, target, value) => waitFor(ctx, target, value, 'attached'),
  waitForElementNotPresent: async (ctx, target, value) => waitFor(ctx, target, value, 'detached'),
  waitForElementVisible: async (ctx, target, value) => waitFor(ctx, target, value, 'visible'),
  waitForElementNotVisible: async (ctx, target, value) => waitFor(ctx, target, value, 'hidden'),
  waitForElementEditable: async (ctx, target, value) => {
    const locator = locate(ctx, target);
    await locator.waitFor({ state: 'visible', timeout: waitMs(ctx, value) });
    if (!(await locator.isEditable())) throw new ReplayError('the element is not editable');
  },
  assertText: async (ctx, target, value) => expectEqual('text', (await locate(ctx, target).innerText({ timeout: ctx.commandTimeoutMs })).trim(), value),
  assertNotText: async (ctx, target, value) => {
    const text = (await locate(ctx, target).innerText({ timeout: ctx.commandTimeoutMs })).trim();
    if (text === value) throw new ReplayError(`the text is '${value.slice(0, 120)}'`);
  },
  assertTitle: async (ctx, target) => {
    await ctx.page.waitForLoadState('load', { timeout: ctx.commandTimeoutMs });
    expectEqual('title', await ctx.page.title(), target);
  },
  assertElementPresent: async (ctx, target) => {
    await locate(ctx, target).waitFor({ state: 'attached', timeout: ctx.commandTimeoutMs });
  },
  assertElementNotPresent: async (ctx, target) => {
    if ((await locate(ctx, target).count()) > 0) throw new ReplayError('the element is present');
  },
  assertValue: async (ctx, target, value) => expectEqual('value', await locate(ctx, target).inputValue({ timeout: ctx.commandTimeoutMs }), value),
  store: async (ctx, target, value) => void ctx.variables.set(variableName(value), target),
  storeText: async (ctx, target, value) =>
    void ctx.variables.set(variableName(value), (await locate(ctx, target).innerText({ timeout: ctx.commandTimeoutMs })).trim()),
  storeValue: async (ctx, target, value) =>
    void ctx.variables.set(variableName(value), await locate(ctx, target).inputValue({ timeout: ctx.commandTimeoutMs })),
  storeTitle: async (ctx, target, value) => void ctx.variables.set(variableName(value || target), await ctx.page.title()),
  storeAttribute: async (ctx, target, value) => {
    const at = target.lastIndexOf('@');
    if (at <= 0) throw new ReplayError(`'${target.slice(0, 120)}' is not locator@attribute`);
    const attribute = await locate(ctx, target.slice(0, at)).getAttribute(target.slice(at + 1), { timeout: ctx.commandTimeoutMs });
    ctx.variables.set(variableName(value), attribute ?? '');
  },
  echo: async () => undefined,
};

// Selenium IDE's verify* commands check the same things as assert*; a login that fails a check has not logged in, so both stop the replay.
for (const name of ['Text', 'NotText', 'Title', 'ElementPresent', 'ElementNotPresent', 'Value']) HANDLERS[`verify${name}`] = HANDLERS[`assert${name}`]!;

const SUPPORTED_COMMANDS: readonly string[] = Object.keys(HANDLERS).sort();

export async function runCommand(ctx: ReplayContext, command: RecordedCommand): Promise<void> {
  if (SCRIPT_COMMANDS.has(command.command))
    throw new ReplayError('login recordings may not run JavaScript of their own; record the login with clicks and typing instead');
  const handler = Object.hasOwn(HANDLERS, command.command) ? HANDLERS[command.command] : undefined;
  if (handler === undefined) throw new ReplayError(`the command is not supported; Vigil replays ${SUPPORTED_COMMANDS.join(', ')}`);
  const target = substitute(command.target, ctx.variables);
  const value = command.command === 'sendKeys' ? command.value : substitute(command.value, ctx.variables);
  await handler(ctx, target, value);
}

/** `${name}` takes a stored variable's value; `${KEY_...}` stays for sendKeys. */
function substitute(text: string, variables: Map<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => variables.get(name) ?? whole);
}

function variableName(text: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) throw new ReplayError(`'${text.slice(0, 40)}' is not a variable name`);
  return text;
}

/** Selenium IDE locators: id=, name=, css=, xpath= (or a bare //path), linkText=, partialLinkText=. The first match, as Selenium takes it. */
export function locate(ctx: ReplayContext, target: string): Locator {
  const page = ctx.page;
  const at = target.indexOf('=');
  const strategy = at > 0 ? target.slice(0, at) : '';
  const rest = target.slice(at + 1);
  if (target.startsWith('//') || target.startsWith('(//')) return page.locator(`xpath=${target}`).first();
  switch (strategy) {
    case 'id':
      return page.locator(`[id="${cssString(rest)}"]`).first();
    case 'name':
      return page.locator(`[name="${cssString(rest)}"]`).first();
    case 'css':
      return page.locator(`css=${rest}`).first();
    case 'xpath':
      return page.locator(`xpath=${rest}`).first();
    case 'linkText':
      return page
        .locator('a')
        .filter({ hasText: new RegExp(`^\\s*${escapeRegex(rest)}\\s*$`) })
        .first();
    case 'partialLinkText':
      return page.locator('a').filter({ hasText: rest }).first();
    default:
      throw new ReplayError(`locator '${target.slice(0, 120)}' is not one of id=, name=, css=, xpath=, linkText=, partialLinkText=`);
  }
}

function cssString(text: string): string {
  return text.replace(/["\\]/g, '\\$&');
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

async function sendKeys(ctx: ReplayContext, locator: Locator, value: string): Promise<void> {
  await locator.focus({ timeout: ctx.commandTimeoutMs });
  for (const part of value.split(/(\$\{KEY_[A-Z_]+\})/)) {
    if (part === '') continue;
    const key = /^\$\{KEY_([A-Z_]+)\}$/.exec(part)?.[1];
    if (key === undefined) await locator.pressSequentially(substitute(part, ctx.variables), { timeout: ctx.commandTimeoutMs });
    else if (KEYS[key] !== undefined) await locator.press(KEYS[key]!, { timeout: ctx.commandTimeoutMs });
    else
      throw new ReplayError(
        `key \${KEY_${key}} is not supported; Vigil sends ${Object.keys(KEYS)
          .map((name) => `\${KEY_${name}}`)
          .join(', ')}`,
      );
  }
}

function optionOf(value: string): { label: string } | { value: string } | { index: number } {
  const at = value.indexOf('=');
  const kind = at > 0 ? value.slice(0, at) : 'label';
  const text = at > 0 ? value.slice(at + 1) : value;
  if (kind === 'label') return { label: text };
  if (kind === 'value') return { value: text };
  if (kind === 'index' && /^\d+$/.test(text)) return { index: Number(text) };
  throw new ReplayError(`option '${value.slice(0, 80)}' is not label=, value= or index=`);
}

function waitMs(ctx: ReplayContext, value: string): number {
  const ms = Number(value);
  return value !== '' && Number.isFinite(ms) && ms > 0 ? Math.min(ms, ctx.commandTimeoutMs) : ctx.commandTimeoutMs;
}

async function waitFor(ctx: ReplayContext, target: string, value: string, state: 'attached' | 'detached' | 'visible' | 'hidden'): Promise<void> {
  await locate(ctx, target).waitFor({ state, timeout: waitMs(ctx, value) });
}

function expectEqual(what: string, actual: string, expected: string): void {
  if (actual !== expected) throw new ReplayError(`the ${what} is '${actual.slice(0, 120)}', not '${expected.slice(0, 120)}'`);
}
